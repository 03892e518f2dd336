// The page's actions (Preview, Download, Charts) run one at a time: while one runs the buttons
// wait, and Cancel aborts the download or the charts. Owned by one object the page makes.

import type { Feedback, PageRegion } from './feedback.ts'
import type { RangeController } from './range-controller.ts'
import type { SelectionCounts } from './selection-counts.ts'
import type { TokenController } from './token-controller.ts'

/** What an action's controller works with: where to say things, the token, the query, the buttons. */
export interface ActionContext {
  feedback: Feedback<PageRegion>
  token: TokenController
  range: RangeController
  actions: Actions
  /** The charts' count of the selection on show (selection-counts.ts). */
  counts: SelectionCounts
}

export interface ActionElements {
  buttons: HTMLButtonElement[]
  cancel: HTMLButtonElement
  /** "Preview and Download work once a token is accepted", shown while there is no token. */
  hint: HTMLElement
}

export class Actions {
  private busy = false
  private running: AbortController | null = null

  constructor(
    private readonly els: ActionElements,
    private readonly hasToken: () => boolean,
  ) {
    els.cancel.addEventListener('click', () => this.cancel())
  }

  /** Enables the buttons when a token is in use and nothing runs. */
  update(): void {
    const ready = this.hasToken() && !this.busy
    for (const button of this.els.buttons) button.disabled = !ready
    this.els.hint.hidden = this.hasToken()
  }

  isBusy(): boolean {
    return this.busy
  }

  /** Runs `work` with the buttons waiting until it ends, however it ends. */
  async run(work: () => Promise<void>): Promise<void> {
    // The button pressed is disabled while the work runs, which drops the focus to <body>: it
    // goes back to that button after, so a keyboard user carries on from where they were.
    const started = document.activeElement
    this.setBusy(true)
    try {
      await work()
    } finally {
      this.setBusy(false)
      const lost = !document.activeElement || document.activeElement === document.body
      if (lost && started instanceof HTMLElement && started !== document.body && started.isConnected) started.focus({ preventScroll: true })
    }
  }

  /** As run, with Cancel aborting `signal` until the work ends. `work` explains its own failures. */
  async runCancellable(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController()
    this.running = controller
    this.els.cancel.disabled = false
    try {
      await this.run(() => work(controller.signal))
    } finally {
      this.running = null
      this.els.cancel.disabled = true
    }
  }

  cancel(): void {
    this.running?.abort()
  }

  private setBusy(busy: boolean): void {
    this.busy = busy
    this.update()
  }
}
