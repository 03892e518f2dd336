import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client'

/**
 * WORKERS=N: one scrape of the parent covers every worker (docs/operations.md#metrics), asked over
 * Bun.spawn's IPC channel and combined by prom-client's `aggregate`
 * (docs/decisions/0020-metrics-across-workers.md). A counter never goes backwards (Prometheus
 * would read a reset): a silent worker counts with its last answer, an exited one leaves its
 * counters behind. Workers are known by pid: during a rolling restart two hold one index.
 * Complete too: a worker that stops gracefully sends its final metrics once its drain has ended
 * (`final`) and waits until the parent kept them; the parent asks every worker on a timer
 * (`refresh`), so a worker killed outright leaves counts at most about one interval old.
 */

type MetricJson = MetricObjectWithValues<MetricValue<string>>

interface ScrapeRequest {
  type: 'metrics?'
  id: number
}

interface ScrapeAnswer {
  type: 'metrics'
  id: number
  metrics: MetricJson[]
  /** Sent once, after the worker's drain: nothing more will be counted. */
  final?: boolean
}

/** The parent's word that it kept a worker's final metrics: the worker may exit. */
interface FinalKept {
  type: 'metrics-kept'
}

/** How long a stopping worker waits for the parent to keep its final metrics (a parent gone does not answer). */
const FINAL_ACK_TIMEOUT_MS = 2000

/** What a worker's side of the channel does: answers scrapes, and sends its final metrics when it stops. */
export interface ParentChannel {
  /** Sends this process's final metrics; resolves once the parent has kept them (or did not answer in time). */
  final(): Promise<void>
}

/**
 * In a worker: answers the parent's scrape requests with these registries. The process
 * registry's values carry the worker's own label, so they are passed through, never combined.
 */
export function answerScrapesFromParent(service: Registry, processMetrics: Registry): ParentChannel {
  const send = process.send?.bind(process)
  if (!send) return { final: async () => {} } // not started by a parent with a channel
  const current = async () => [...(await service.getMetricsAsJSON()), ...(await perProcessJson(processMetrics))]
  let kept = () => {}
  process.on('message', (message: unknown) => {
    if (isFinalKept(message)) return kept()
    if (!isScrapeRequest(message)) return
    void current().then((metrics) => {
      const answer: ScrapeAnswer = { type: 'metrics', id: message.id, metrics }
      send(answer)
    })
  })
  return {
    async final() {
      const answer: ScrapeAnswer = { type: 'metrics', id: 0, metrics: await current(), final: true }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FINAL_ACK_TIMEOUT_MS)
        kept = () => {
          clearTimeout(timer)
          resolve()
        }
        try {
          send(answer)
        } catch {
          kept() // the channel is closed: the parent is gone
        }
      })
    },
  }
}

/**
 * A process's own metrics as JSON to combine with others: every series carries the process's
 * `worker` label, so there is nothing to add up, only to keep ("first"; the library's own
 * choice for some of them, "omit", would drop them).
 */
async function perProcessJson(registry: Registry): Promise<MetricJson[]> {
  return (await registry.getMetricsAsJSON()).map((metric) => ({ ...metric, aggregator: 'first' }) as MetricJson)
}

function isScrapeRequest(message: unknown): message is ScrapeRequest {
  return typeof message === 'object' && message !== null && (message as ScrapeRequest).type === 'metrics?' && typeof (message as ScrapeRequest).id === 'number'
}

function isFinalKept(message: unknown): message is FinalKept {
  return typeof message === 'object' && message !== null && (message as FinalKept).type === 'metrics-kept'
}

function isScrapeAnswer(message: unknown): message is ScrapeAnswer {
  return typeof message === 'object' && message !== null && (message as ScrapeAnswer).type === 'metrics' && Array.isArray((message as ScrapeAnswer).metrics)
}

interface Worker {
  send: (message: ScrapeRequest | FinalKept) => void
  last?: MetricJson[]
  /** It sent its final metrics: later answers (asked for before) are no newer. */
  final: boolean
  waiting: Map<number, () => void>
}

/** How often the parent asks every worker for its metrics between scrapes. */
export const REFRESH_EVERY_MS = 1000

/** What the parent keeps of each worker for the next scrape. */
export class WorkerMetrics {
  private readonly workers = new Map<number, Worker>()
  /** Counters and histograms of workers that exited, summed. */
  private retired: MetricJson[] = []
  private nextId = 1
  private refreshing = false

  /**
   * @param options.parentProcess the parent's own process metrics, included in every scrape
   * @param options.parent the parent's own service metrics (the supervisor's counts), included as they are
   * @param options.answerTimeoutMs how long a scrape waits for a worker before it uses that worker's last answer
   */
  constructor(private readonly options: { parentProcess?: Registry; parent?: Registry; answerTimeoutMs?: number } = {}) {}

  /** A worker started; `send` posts a message to it. */
  opened(pid: number, send: (message: unknown) => void): void {
    this.workers.set(pid, { send, final: false, waiting: new Map() })
  }

  /** A message from a worker (anything else than an answer is ignored). */
  received(pid: number, message: unknown): void {
    if (!isScrapeAnswer(message)) return
    const worker = this.workers.get(pid)
    if (!worker) return
    if (!worker.final) worker.last = message.metrics
    if (message.final) {
      worker.final = true
      this.tell(worker, { type: 'metrics-kept' })
    }
    worker.waiting.get(message.id)?.()
  }

  /**
   * Asks every worker for its metrics now, so that what a worker killed outright leaves is that
   * recent (called on a timer; a round still waiting for a worker is not started again).
   */
  async refresh(): Promise<void> {
    if (this.refreshing) return
    this.refreshing = true
    try {
      await Promise.all([...this.workers.values()].map((worker) => this.ask(worker)))
    } finally {
      this.refreshing = false
    }
  }

  /** A worker exited: what it counted stays in the service's totals. */
  closed(pid: number): void {
    const worker = this.workers.get(pid)
    this.workers.delete(pid)
    for (const done of worker?.waiting.values() ?? []) done()
    if (!worker?.last) return
    const kept = worker.last.filter((metric) => metric.name.startsWith('queue_api_') && ['counter', 'histogram'].includes(String(metric.type)))
    this.retired = combine([this.retired, kept])
  }

  /** Every worker's metrics (each as fresh as it could answer) and the parent's own, as one registry. */
  async collect(): Promise<Registry> {
    const { parentProcess, parent } = this.options
    const [own, supervisor] = await Promise.all([
      parentProcess ? perProcessJson(parentProcess) : [],
      parent ? parent.getMetricsAsJSON() : [],
      ...[...this.workers.values()].map((worker) => this.ask(worker)),
    ])
    // Read now, in one go: a worker that exited during the wait is in `retired`, no longer in `workers`.
    const answers = [...this.workers.values()].map((worker) => worker.last ?? [])
    return AggregatorRegistry.aggregate([...answers, this.retired, own, supervisor as MetricJson[]])
  }

  /** Asks a worker for its metrics; settles when it answered (its `last` is then fresh), timed out, or exited. */
  private ask(worker: Worker): Promise<void> {
    const id = this.nextId++
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        worker.waiting.delete(id)
        resolve()
      }
      const timer = setTimeout(done, this.options.answerTimeoutMs ?? 1000)
      worker.waiting.set(id, done)
      if (!this.tell(worker, { type: 'metrics?', id })) done()
    })
  }

  /** Sends to a worker; false when the channel closed under us (the worker is exiting). */
  private tell(worker: Worker, message: ScrapeRequest | FinalKept): boolean {
    try {
      worker.send(message)
      return true
    } catch {
      return false
    }
  }
}

/** Several registries' JSON as one (synchronously: what the aggregated registry holds is already computed). */
function combine(parts: MetricJson[][]): MetricJson[] {
  const registry = AggregatorRegistry.aggregate(parts)
  return registry.getMetricsAsArray().map((metric) => {
    const { help, name, type, values, aggregator } = metric as unknown as MetricJson
    return { help, name, type, values, aggregator } as MetricJson
  })
}
