import { type ControlStore, type Organisation, type Plan } from '../control/store.ts'
import { createOrganisationWithTenant } from '../control/provisioning.ts'
import { finishMigration, migrateTenantFile, openTenantForReplacing } from '../tenant/files.ts'
import { checkTenantFile } from './check.ts'
import { deleteOrganisation } from './org-delete.ts'
import { generateTenantData, writeSeededZones } from '../seed/generator.ts'
import { schemaVersion } from '../db/migrator.ts'
import { TENANT_SCHEMA_VERSION } from '../tenant/migrations.ts'
import { hashToken, TOKEN_PREFIX } from '../auth/token.ts'
import { integerOption, parseOptions, requireOption, UsageError } from './args.ts'

/** What a command produced: a JSON document for --json, lines of text otherwise. */
export interface CommandOutput {
  json: unknown
  text: string[]
  /** The exit status when the command ran but found something to act on (`check`, `migrate`); 0 otherwise. */
  status?: number
}

export interface CommandContext {
  store: ControlStore
  now: number
}

const json = { json: { type: 'boolean' } } as const

function organisationView(org: Organisation) {
  return { id: org.id, name: org.name, slug: org.slug, plan: org.plan, apiEnabled: org.apiEnabled, createdAt: org.createdAt }
}

function findOrganisation(store: ControlStore, idOrSlug: string): Organisation {
  const org = store.findOrganisation(idOrSlug)
  if (!org) throw new UsageError(`unknown organisation "${idOrSlug}"`)
  return org
}

function orgLine(org: Organisation): string {
  return `${org.id}  ${org.slug}  ${org.plan}  api ${org.apiEnabled ? 'enabled' : 'disabled'}  ${org.name}`
}

function migrationText(m: { from: number; to: number }): string {
  return m.from === m.to ? `already current (version ${m.to})` : `version ${m.from} → ${m.to}`
}

/**
 * `token revoke` was given a token itself instead of its id. The token is never echoed (it would
 * land in logs and terminal scrollback); if it is a known one, its id is the next command.
 */
function tokenGivenForId(store: ControlStore, token: string): string {
  const found = store.lookupToken(hashToken(token))
  return found
    ? `token revoke takes the token's id, not the token itself: run \`admin token revoke ${found.tokenId}\``
    : 'token revoke takes the token\'s id (tok_…), not the token itself (svc_…); `admin token list --org <org>` shows the ids'
}

/** Runs one admin command; throws UsageError or ControlStoreError for wrong input. */
export function runCommand(argv: string[], context: CommandContext): CommandOutput & { wantsJson: boolean } {
  const [group, action, ...rest] = argv
  const { store, now } = context
  const single = group === 'seed' || group === 'migrate' || group === 'check'
  const key = single ? group : `${group} ${action}`
  const args = single ? argv.slice(1) : rest

  switch (key) {
    case 'org create': {
      const { values } = parseOptions(args, { name: { type: 'string' }, slug: { type: 'string' }, demo: { type: 'boolean' }, 'api-disabled': { type: 'boolean' }, ...json })
      const org = createOrganisationWithTenant(store, {
        name: requireOption(values.name, 'name'),
        slug: values.slug,
        plan: values.demo ? 'demo' : 'paid',
        apiEnabled: !values['api-disabled'],
        now,
      })
      return { wantsJson: !!values.json, json: organisationView(org), text: [`created organisation ${orgLine(org)}`] }
    }
    case 'org list': {
      const { values } = parseOptions(args, json)
      const orgs = store.listOrganisations()
      return { wantsJson: !!values.json, json: { organisations: orgs.map(organisationView) }, text: orgs.length ? orgs.map(orgLine) : ['no organisations'] }
    }
    case 'org update': {
      const { values, positionals } = parseOptions(args, { plan: { type: 'string' }, api: { type: 'string' }, ...json }, {
        missing: 'org update needs the organisation\'s id or slug; `admin org list` shows them',
      })
      if (values.plan === undefined && values.api === undefined) throw new UsageError('nothing to change: give --plan and/or --api')
      const org = findOrganisation(store, positionals[0]!)
      if (values.plan !== undefined && values.plan !== 'demo' && values.plan !== 'paid') throw new UsageError('--plan must be demo or paid')
      if (values.api !== undefined && values.api !== 'enabled' && values.api !== 'disabled') throw new UsageError('--api must be enabled or disabled')
      const updated = store.updateOrganisation(org.id, {
        ...(values.plan !== undefined && { plan: values.plan as Plan }),
        ...(values.api !== undefined && { apiEnabled: values.api === 'enabled' }),
      })
      return { wantsJson: !!values.json, json: organisationView(updated), text: [`updated organisation ${orgLine(updated)}`] }
    }
    case 'org delete': {
      const { values, positionals } = parseOptions(args, { yes: { type: 'boolean' }, ...json }, {
        missing: 'org delete needs the organisation\'s id or slug; `admin org list` shows them',
      })
      const org = findOrganisation(store, positionals[0]!)
      if (!values.yes) {
        const tokens = store.listTokens(org.id).length
        throw new UsageError(`org delete removes organisation ${org.id} (${org.slug}), its ${tokens} token(s) and its tenant file (a copy is kept under deleted/): add --yes to do it`)
      }
      const deleted = deleteOrganisation(store, org, now)
      return {
        wantsJson: !!values.json,
        json: deleted,
        text: [`deleted organisation ${org.id} (${org.slug}) and its ${deleted.tokens} token(s); ${deleted.backup ? `its tenant file is kept as ${deleted.backup} in the data directory` : 'it had no tenant file'}`],
      }
    }
    case 'token create': {
      const { values } = parseOptions(args, { org: { type: 'string' }, name: { type: 'string' }, ...json })
      const org = findOrganisation(store, requireOption(values.org, 'org'))
      const name = requireOption(values.name, 'name').trim()
      const { record, token } = store.createToken({ organisationId: org.id, name, createdAt: new Date(now).toISOString() })
      return {
        wantsJson: !!values.json,
        json: { id: record.id, name: record.name, organisationId: org.id, token, createdAt: record.createdAt },
        text: [`created token ${record.id} "${record.name}" for ${org.slug}`, '', `  ${token}`, '', 'This is the only time the token is shown; store it now.'],
      }
    }
    case 'token list': {
      const { values } = parseOptions(args, { org: { type: 'string' }, ...json })
      const org = findOrganisation(store, requireOption(values.org, 'org'))
      const tokens = store.listTokens(org.id)
      return {
        wantsJson: !!values.json,
        json: { organisationId: org.id, tokens },
        text: tokens.length
          ? tokens.map((t) => `${t.id}  ${t.displayPrefix}…  created ${t.createdAt}  ${t.revokedAt ? `revoked ${t.revokedAt}` : 'active'}  last used ${t.lastUsedAt ?? 'never'}  ${t.name}`)
          : [`no tokens for ${org.slug}`],
      }
    }
    case 'token revoke': {
      const { values, positionals } = parseOptions(args, json, {
        missing: 'token revoke needs the token id (tok_…); `admin token list --org <org>` shows them',
      })
      const id = positionals[0]!
      if (id.startsWith(TOKEN_PREFIX)) throw new UsageError(tokenGivenForId(store, id))
      const before = store.findToken(id)
      if (!before) throw new UsageError(`unknown token "${id}"`)
      const after = store.revokeToken(id, new Date(now).toISOString())!
      const alreadyRevoked = before.revokedAt !== null
      return {
        wantsJson: !!values.json,
        json: { id, revokedAt: after.revokedAt, alreadyRevoked },
        text: [alreadyRevoked ? `token ${id} was already revoked at ${after.revokedAt}` : `revoked token ${id}`],
      }
    }
    case 'seed': {
      const { values } = parseOptions(args, { org: { type: 'string' }, days: { type: 'string' }, 'per-day': { type: 'string' }, seed: { type: 'string' }, replace: { type: 'boolean' }, ...json })
      const org = findOrganisation(store, requireOption(values.org, 'org'))
      const days = integerOption(values.days, 'days', 90, 1, 3660)
      const perDay = integerOption(values['per-day'], 'per-day', 300, 1, 1_000_000)
      const seed = values.seed ?? org.id
      const db = openTenantForReplacing(store.dataDir, org.id)
      try {
        const existing = (db.query('SELECT count(*) AS n FROM tickets').get() as { n: number }).n
        if (existing > 0 && !values.replace) throw new UsageError(`organisation "${org.slug}" already has ${existing} tickets; add --replace to overwrite them`)
        const result = db.transaction(() => {
          db.exec('DELETE FROM tickets; DELETE FROM device_sessions; DELETE FROM queues; DELETE FROM locations;')
          // Replaced data is a new history: a loader's X-Changes-Token of the old one is refused
          // with the message that says to load again, rather than leave it every replaced ticket.
          db.exec('UPDATE change_history SET history_id = lower(hex(randomblob(16)))')
          return generateTenantData(db, { days, perDay, seed, now })
        }).immediate()
        // A file left short of the newest version by rows that broke the contract gets there now.
        finishMigration(db)
        writeSeededZones(db)
        return {
          wantsJson: !!values.json,
          json: { organisationId: org.id, days, perDay, seed, ...result },
          text: [`seeded ${org.slug}: ${result.tickets} tickets, ${result.locations} locations, ${result.queues} queues over ${days} days`],
        }
      } finally {
        db.close()
      }
    }
    case 'migrate': {
      const { values } = parseOptions(args, { to: { type: 'string' }, ...json })
      // Tenant files only: control.sqlite is always brought to the newest version this build knows.
      const target = integerOption(values.to, 'to', TENANT_SCHEMA_VERSION, 1, TENANT_SCHEMA_VERSION)
      const controlStore = { from: store.schemaVersionAtOpen, to: schemaVersion(store.db) }
      const tenants = store.listOrganisations().map((org) => ({ organisationId: org.id, slug: org.slug, ...migrateTenantFile(store.dataDir, org.id, target) }))
      const changed = tenants.filter((t) => t.from !== t.to).length
      const left = tenants.filter((t) => t.from === t.to && t.newer === undefined).length
      const refused = tenants.filter((t) => t.refused !== undefined || t.newer !== undefined)
      return {
        wantsJson: !!values.json,
        json: { controlStore, tenants },
        text: [
          `control store: ${migrationText(controlStore)}`,
          ...tenants.map((t) => `${t.organisationId} (${t.slug}): ${t.newer ?? (t.created ? `file was missing; created at version ${t.to}` : migrationText(t))}${t.refused ? `; stopped short of version ${t.to + 1}: ${t.refused.replace('<org>', t.slug)}` : ''}`),
          `${changed} tenant file(s) changed, ${left} already current${refused.length ? `, ${refused.length} not at ${target === TENANT_SCHEMA_VERSION ? 'the newest version' : `version ${target}`}` : ''}`,
        ],
        // A file left behind needs the operator: a script running migrate must notice.
        status: refused.length ? 1 : 0,
      }
    }
    case 'check': {
      const { values } = parseOptions(args, { org: { type: 'string' }, limit: { type: 'string' }, ...json })
      const org = findOrganisation(store, requireOption(values.org, 'org'))
      const limit = integerOption(values.limit, 'limit', 100, 1, 100_000)
      return { wantsJson: !!values.json, ...checkTenantFile(store.dataDir, org, limit) }
    }
    default:
      throw new UsageError(group === undefined ? 'a command is required' : `unknown command "${[group, action].filter(Boolean).join(' ')}" (admin --help lists the commands)`)
  }
}

