/**
 * The one rule for organisation slugs: lower-case letters, digits and dashes, starting with a
 * letter or digit, at most 63 characters. A slug never looks like an id (`org_…` has `_`), so
 * `<org>` can be either.
 */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62})$/

/** A slug made from a display name ("Café Nord" → "cafe-nord"). */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
}

/** What is wrong with a slug, said to the operator; undefined for a good one. */
export function slugProblem(slug: string): string | undefined {
  return SLUG.test(slug) ? undefined : `slug "${slug}" must be lower-case letters, digits and dashes (at most 63)`
}
