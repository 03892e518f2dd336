import { TENANT_SCHEMA_VERSION } from '../tenant/migrations.ts'

/**
 * `admin --help`. The first line names the command as it was invoked (src/cli/invoked-as.ts):
 * `queue-api admin` in the compiled file, `npm run -s admin --` under npm, whose `-s` keeps npm's
 * own banner off stdout, so that `--json` output parses.
 */
export const adminUsage = (program: string) => `usage: ${program} <command> [options]        ("admin" below stands for this)

commands:
  admin org create --name <name> [--slug <slug>] [--demo] [--api-disabled] [--json]
  admin org list [--json]
  admin org update <org> [--plan demo|paid] [--api enabled|disabled] [--json]
  admin org delete <org> --yes [--json]                    its tokens and tenant file; the file kept under deleted/
  admin token create --org <org> --name <name> [--json]    the only time the token is shown
  admin token list --org <org> [--json]                    ids, names, creation, last use; never a token
  admin token revoke <tokenId> [--json]                    takes the id (tok_…), not the token (svc_…)
  admin seed --org <org> [--days 90] [--per-day 300] [--seed S] [--replace] [--json]
  admin migrate [--to N] [--json]                          every tenant file to version N (default: the newest),
                                                           up as far as its rows allow, or down
  admin check --org <org> [--limit 100] [--json]           the tenant file's rows that break the contract
  admin replica litestream-config --to <url> [--json]      the writer's litestream.yml: control.sqlite and every tenant file
  admin replica ship --to <url> [--every N] [--litestream <path>] [--config <file>]
                                                           the writer: Litestream for control.sqlite and every organisation, restarted when they change
  admin replica restore --from <url> [--every N] [--litestream <path>] [--json]
                                                           a replica: fresh copies from Litestream, swapped in

arguments and options:
  <org>          an organisation's id (org_…) or slug; admin org list shows them
  <tokenId>      a token's id (tok_…); admin token list --org <org> shows them
  --days N       seed: days of history to generate, up to today (1 to 3660, default 90)
  --per-day N    seed: tickets generated per day, on average across the organisation's
                 locations (1 to 1000000, default 300)
  --seed S       seed: the same S gives the same data for the same day (default: the org's id)
  --replace      seed: replace the data the organisation already has (refused without it);
                 the file starts a new change history, so loaders load it again
  --to N         migrate: the tenant schema version to migrate to, up or down (1 to ${TENANT_SCHEMA_VERSION},
                 default ${TENANT_SCHEMA_VERSION}); going down takes away what the versions above N added
  --limit N      check: rows listed at most (1 to 100000, default 100); all are counted
  --to, --from   replica: where the writer's Litestream replicates (file:///srv/replica, s3://bucket/path)
  --every N      replica restore: a round every N seconds (1 to 86400) until stopped; without it, one round;
                 replica ship: how often control.sqlite's organisations are compared (default 5)
  --litestream P replica: the litestream executable (default: litestream on the PATH)
  --config F     replica ship: where it writes litestream.yml (default: DATA_DIR/.litestream.yml)
  --json         exactly one JSON document on stdout; an error is one JSON document on stderr

exit status: 0 done; 2 wrong input (one line on stderr, nothing written); 1 unexpected error,
  or rows that break the tenant contract (check), or a file left short of the newest version (migrate).`
