// The analyst's export page: finds the page's elements and gives each controller its own. One
// controller per thing the analyst does: the token, the range (what to export), the preview, the
// download and the charts. TypeScript modules bundled by the server (src/web/routes.ts), the
// client as a module of its own; nothing loaded from another host. Every API call goes through api.ts.

import { Actions } from './actions.ts'
import { ChartsController } from './charts-controller.ts'
import { DownloadController } from './download-controller.ts'
import { createFeedback } from './feedback.ts'
import { PreviewController } from './preview-controller.ts'
import { RangeController } from './range-controller.ts'
import { SelectionCounts } from './selection-counts.ts'
import { TokenController } from './token-controller.ts'

/** The page's element of that id (index.html has every one this page names). */
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T

function startPage(): void {
  const feedback = createFeedback({
    regions: { token: $('token-message'), range: $('range-message'), zone: $('zone-message'), query: $('message') },
    progress: $('progress'),
  })
  const buttons = { preview: $<HTMLButtonElement>('preview'), download: $<HTMLButtonElement>('download'), charts: $<HTMLButtonElement>('charts') }
  const token = new TokenController({ form: $('token-form'), input: $('token'), forget: $('forget-token'), status: $('token-status'), demo: $('demo-notice'), quota: $('quota') }, feedback)
  const actions = new Actions({ buttons: Object.values(buttons), cancel: $('cancel'), hint: $('actions-hint') }, () => Boolean(token.token))
  const range = new RangeController(
    {
      form: $('query-form'), from: $('from'), to: $('to'), toHelp: $('to-help'), zone: $('zone'), zoneNames: $('zone-names'), zoneHelp: $('zone-help'),
      places: $('places'), placesList: $('places-list'), statuses: $('statuses'), summary: $('summary'),
      presets: $('presets'), rangeStatus: $('range-status'), dayZone: $('day-zone'), dayZoneHelp: $('day-zone-help'),
    },
    feedback,
  )
  const page = { feedback, token, range, actions, counts: new SelectionCounts() }
  const preview = new PreviewController({ section: $('preview-section'), count: $('preview-count'), table: $('preview-table') }, page)
  new DownloadController({ download: buttons.download, saveAs: $('save-as'), csvInstead: $('csv-instead'), withNames: $('with-names'), asWorkbook: $('as-xlsx') }, page)
  const charts = new ChartsController({ target: $('target-wait'), charts: buttons.charts, progressBar: $('progress-bar'), section: $('charts-section'), summary: $('charts-summary'), list: $('charts-list') }, page)
  range.onZone(() => charts.zoneChanged())

  token.onChange((organisation, forgotten) => {
    if (!organisation) actions.cancel()
    // Forget clears everything the token showed; a token the API refused leaves the results in view.
    if (forgotten) {
      feedback.clear()
      feedback.progress('')
      preview.clear()
      charts.clear()
      page.counts.clear()
    }
    range.showOrganisation(organisation)
    actions.update()
  })
  actions.update()
  token.start()
}

startPage()
