// Load generator run under Node (autocannon), pinned by the caller to its own core.
// Input: argv[2] names a JSON file { base, paths: [...], tokens: [...], connections, duration }.
// Each request picks a random path and a random token. Output (stdout, JSON): req/s and latency percentiles.
const autocannon = require('autocannon')
const config = JSON.parse(require('node:fs').readFileSync(process.argv[2], 'utf8'))
const pick = (list) => list[Math.floor(Math.random() * list.length)]
const instance = autocannon(
  {
    url: config.base,
    connections: config.connections,
    duration: config.duration,
    requests: [
      {
        setupRequest: (request) => {
          request.path = pick(config.paths)
          request.headers = { authorization: `Bearer ${pick(config.tokens)}` }
          return request
        },
      },
    ],
  },
  (error, result) => {
    if (error) {
      console.error(error)
      process.exit(1)
    }
    const statuses = { '2xx': result['2xx'], non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }
    console.log(JSON.stringify({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total, statuses }))
  },
)
process.on('SIGINT', () => instance.stop())
