// Renders /openapi.json with Swagger UI, served by this server (no CDN, no validator badge),
// with the few changes its markup needs to pass an accessibility check (axe-core, serious and
// critical rules); the colours are in docs.css.

/** The part of Swagger UI's global (swagger-ui-bundle.js, loaded before this script) that this page uses. */
interface SwaggerSystem {
  React: { createElement: (type: string, props: object, ...children: unknown[]) => unknown }
}
declare const SwaggerUIBundle: (options: {
  url: string
  dom_id: string
  validatorUrl: null
  deepLinking: boolean
  tryItOutEnabled: boolean
  plugins: ((system: SwaggerSystem) => object)[]
}) => unknown

/**
 * Swagger UI puts each operation's path, a link when deep linking is on, inside the button that
 * opens the operation: a control nested in a control. A plain span keeps the text; deep links
 * still work, since the URL is updated by the deep-linking plugin and not by this link.
 */
const PathWithoutNestedLink = (system: SwaggerSystem) => ({
  components: {
    DeepLink: ({ text }: { text: string }) => system.React.createElement('span', { className: 'nostyle' }, text),
  },
})

;(window as unknown as { ui: unknown }).ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#reference',
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
  plugins: [PathWithoutNestedLink],
})

/**
 * Swagger UI draws some <select>s without a name: the servers list (inside an empty <label>) and
 * the list of an enum parameter's values. Each gets one whenever it is (re)drawn. Its example
 * code blocks scroll sideways on a phone: each takes the keyboard focus, so the keys scroll it.
 */
function fixMarkup() {
  for (const code of document.querySelectorAll<HTMLElement>('#reference .microlight:not([tabindex])')) code.tabIndex = 0
  for (const select of document.querySelectorAll('#reference select:not([aria-label])')) {
    const parameter = select.closest('tr[data-param-name]')?.getAttribute('data-param-name')
    if (select.id === 'servers') select.setAttribute('aria-label', 'Server')
    else if (parameter) select.setAttribute('aria-label', `Values of ${parameter}`)
  }
}
new MutationObserver(fixMarkup).observe(document.getElementById('reference')!, { childList: true, subtree: true })
