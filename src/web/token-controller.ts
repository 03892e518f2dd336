// The token: pasting one, forgetting it, what the page says about it and its organisation (its
// locations, whether it is a demo one and its day's quota), and dropping it when the API no
// longer accepts it.

import { ApiResponseError } from '../client/index.ts'
import { fetchLocations, limitsShownBy, type PageLimits } from './api.ts'
import { listNames, type Feedback, type PageRegion } from './feedback.ts'
import { placeNames } from './places.ts'
import { forgetSession, rememberOrganisation, rememberedOrganisation, storeToken, storedToken, tokenHint, type Organisation } from './session.ts'

export interface TokenElements {
  form: HTMLFormElement
  input: HTMLInputElement
  forget: HTMLButtonElement
  status: HTMLElement
  demo: HTMLElement
  quota: HTMLElement
}

export class TokenController {
  token: string | null = storedToken()
  /** The token's organisation, once known. */
  organisation: Organisation | null = null
  /** Whether the quota figures were read by this page load (not remembered from an earlier one). */
  private freshQuota = false
  private readonly listeners: ((organisation: Organisation | null, forgotten: boolean) => void)[] = []

  constructor(
    private readonly els: TokenElements,
    private readonly feedback: Feedback<PageRegion>,
  ) {
    els.form.addEventListener('submit', (event) => void this.useToken(event))
    els.forget.addEventListener('click', () => this.forget())
  }

  /** `listener` hears of every organisation shown, and of null when the token goes (`forgotten`: by Forget, else refused). */
  onChange(listener: (organisation: Organisation | null, forgotten: boolean) => void): void {
    this.listeners.push(listener)
  }

  /** Shows the token kept for this tab, if any (reloading spends no request when its organisation was seen). */
  start(): void {
    this.showStatus()
    if (!this.token) return
    const remembered = rememberedOrganisation(this.token)
    if (remembered) this.show(remembered)
    else this.load(this.token).catch((error) => this.handleProblem(error, 'token'))
  }

  /** Takes in what an answer's rate-limit headers said (demo or not, the day's quota). */
  noteLimits(limits: PageLimits): void {
    if (!this.organisation) return
    Object.assign(this.organisation, { demo: limits.demo, day: limits.day, seenAt: Date.now() })
    this.freshQuota = true
    rememberOrganisation(this.token!, this.organisation)
    this.showQuota()
    this.showStatus()
  }

  /** A failed call: a token that is no longer accepted is dropped and explained next to the token field. */
  handleProblem(error: unknown, region: PageRegion): void {
    const limits = limitsShownBy(error)
    if (limits) this.noteLimits(limits)
    if (error instanceof ApiResponseError && (error.status === 401 || error.status === 402)) {
      this.drop(false)
      this.els.input.focus()
      this.feedback.explain(error, 'token')
      return
    }
    this.feedback.explain(error, region)
  }

  private async useToken(event: Event): Promise<void> {
    event.preventDefault()
    const value = this.els.input.value.trim()
    if (!value) {
      this.els.input.focus()
      this.feedback.show('token', 'Paste a token first.')
      return
    }
    this.feedback.clear()
    this.feedback.progress('Checking the token…')
    try {
      await this.load(value)
      // Kept only once accepted: a rejected token is never stored nor shown as in use.
      storeToken(value)
      this.els.input.value = ''
      this.feedback.progress('')
    } catch (error) {
      this.feedback.progress('')
      // 401/402: this token will not work, so it is not kept, not even in the field.
      if (error instanceof ApiResponseError && (error.status === 401 || error.status === 402)) this.els.input.value = ''
      this.els.input.focus()
      this.feedback.explain(error, 'token')
    }
  }

  private async load(token: string): Promise<void> {
    const { locations, limits } = await fetchLocations(token)
    this.token = token
    this.freshQuota = true
    const organisation = { locations, demo: limits.demo, day: limits.day, seenAt: Date.now() }
    this.show(organisation)
    rememberOrganisation(token, organisation)
  }

  private show(organisation: Organisation): void {
    this.organisation = organisation
    this.showQuota()
    this.showStatus()
    for (const listener of this.listeners) listener(organisation, false)
  }

  private forget(): void {
    this.drop(true)
    this.els.input.value = ''
    // Said under the token field, next to the button that did it.
    this.els.status.textContent = 'No token in use: the token was forgotten from this tab.'
  }

  private drop(forgotten: boolean): void {
    forgetSession()
    this.token = null
    this.organisation = null
    this.showQuota()
    this.showStatus()
    for (const listener of this.listeners) listener(null, forgotten)
  }

  /** The API tells no organisation name: the token's organisation is shown by its locations. */
  private showStatus(): void {
    if (!this.token) {
      this.els.status.textContent = 'No token in use.'
      return
    }
    let text = `Token ${tokenHint(this.token)} is in use for this tab.`
    const organisation = this.organisation
    if (organisation) {
      const names = [...placeNames(organisation.locations).locations.values()]
      const kind = organisation.demo ? 'a demo organisation' : 'the organisation'
      text += names.length === 0
        ? ` It belongs to ${kind} that has no locations yet.`
        : ` It belongs to ${kind} with ${names.length === 1 ? 'the location' : `${names.length} locations:`} ${listNames(names)}.`
    }
    this.els.status.textContent = text
  }

  private showQuota(): void {
    const { demo, day, seenAt } = this.organisation ?? { demo: false, day: null, seenAt: 0 }
    this.els.demo.hidden = !demo
    if (!day) {
      this.els.quota.textContent = ''
      return
    }
    const asOf = this.freshQuota ? '' : ` (as of ${new Date(seenAt).toLocaleTimeString()})`
    this.els.quota.textContent = day.remaining! > 0
      ? `${day.remaining} of ${day.limit} requests left today${asOf}; each preview or download uses one.`
      : `No requests left today${asOf}: the quota of ${day.limit} resets at ${new Date(seenAt + day.resetSeconds! * 1000).toLocaleTimeString()} (your local time).`
  }
}
