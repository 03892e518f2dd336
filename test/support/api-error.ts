import { expect } from 'bun:test'
import { ApiError } from '../../src/errors/api-error.ts'

/** Asserts that `fn` throws a 400 invalid_request naming `param`, whose message matches `fragment`. */
export function expectInvalidParam(fn: () => unknown, param: string, fragment: string | RegExp): void {
  let caught: unknown
  try {
    fn()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(ApiError)
  const error = caught as ApiError
  expect(error.status).toBe(400)
  expect(error.errorCode).toBe('invalid_request')
  expect(error.extra.param).toBe(param)
  expect(error.message).toMatch(fragment)
}
