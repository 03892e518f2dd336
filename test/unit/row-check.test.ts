import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { migrate } from '../../src/db/migrator.ts'
import { TENANT_MIGRATIONS } from '../../src/tenant/migrations.ts'
import { CONTRACT_TRIGGERS_PRESENT_SQL, findBreach, type ColumnRule, MAX_TICKET_NUMBER, ROW_RULES, ruleSql, scanBreaches, servedRowSql, valueHolds } from '../../src/tenant/row-check.ts'

/** Values each kind of column is tried with: [value, holds]. */
const TIMESTAMPS: [unknown, boolean][] = [
  ['2026-03-01T08:00:00.000Z', true],
  ['2024-02-29T23:59:59.999Z', true],
  ['2026-02-30T00:00:00.000Z', false], // not a real day
  ['2000-02-29T00:00:00.000Z', true],
  ['2025-02-29T00:00:00.000Z', false],
  ['1900-02-29T00:00:00.000Z', false],
  ['2026-04-31T00:00:00.000Z', false],
  ['2026-00-10T00:00:00.000Z', false],
  ['2026-03-00T00:00:00.000Z', false],
  ['2026-03-01T08:60:00.000Z', false],
  ['2026-12-31T23:59:59.999Z', true],
  ['2026-03-01T24:00:00.000Z', false],
  ['2026-03-01T08:00:60.000Z', false],
  ['2026-03-01 08:00:00.000Z', false],
  ['2026-03-01T08:00:00Z', false],
  ['2026-03-01T08:00:00.000+01:00', false],
  ['2026-03-01T08:00:00.000Z\0', false],
  ['', false],
  [1_772_352_000_000, false],
  [new Uint8Array([0, 255]), false],
]
const NUMBERS: [unknown, boolean][] = [
  [0, true],
  [42, true],
  [MAX_TICKET_NUMBER, true],
  [MAX_TICKET_NUMBER + 1, false],
  [3_000_000_000, false],
  [-1, false],
  [1.5, false],
  ['abc', false],
  [new Uint8Array([1]), false],
]
const IDS: [unknown, boolean][] = [
  ['t_1', true],
  ['Zürich — 1', true],
  ['', false],
  ['a\0b', false],
  [7, false],
  [new Uint8Array([116]), false],
]

let db: Database
beforeEach(() => {
  db = new Database(':memory:')
  migrate(db, TENANT_MIGRATIONS)
})
afterEach(() => db.close())

/** What the SQL of a rule says of a value (the same SQL the triggers and `admin check` use). */
function sqlHolds(rule: ColumnRule, value: unknown): boolean {
  const row = db.query(`SELECT ${ruleSql(rule)} AS ok FROM (SELECT ? AS "${rule.column}")`).get(value as never) as { ok: number }
  return row.ok === 1
}

describe('the value rules', () => {
  const rule = (column: string) => ROW_RULES.tickets.find((r) => r.column === column)!
  for (const [column, cases] of [['created_at', TIMESTAMPS], ['called_at', TIMESTAMPS], ['number', NUMBERS], ['id', IDS], ['queue_id', IDS]] as const) {
    test(`${column}: the SQL and the function agree on every value`, () => {
      for (const [value, holds] of cases) {
        expect({ value, holds: valueHolds(rule(column), value) }).toEqual({ value, holds })
        expect({ value, holds: sqlHolds(rule(column), value) }).toEqual({ value, holds })
      }
    })
  }

  test('NULL: allowed in an optional column only', () => {
    expect(valueHolds(rule('called_at'), null)).toBe(true)
    expect(sqlHolds(rule('called_at'), null)).toBe(true)
    expect(valueHolds(rule('created_at'), null)).toBe(false)
    expect(sqlHolds(rule('created_at'), null)).toBe(false)
  })

  test('a served row: the columns it carries are checked, by their property names', () => {
    const good = { id: 't_1', number: 1, queueId: 'q', locationId: 'l', status: 'CALLED', createdAt: '2026-03-01T08:00:00.000Z', calledAt: null }
    expect(findBreach('tickets', good)).toBeUndefined()
    expect(findBreach('tickets', { ...good, calledAt: new Uint8Array([0, 255]), number: 2 ** 53 + 1 })).toEqual({
      table: 'tickets',
      id: 't_1',
      columns: ['number', 'called_at'],
      rules: ['tickets.number must be an integer from 0 to 2147483647', 'tickets.called_at must be a UTC instant written YYYY-MM-DDTHH:MM:SS.sssZ or NULL'],
    })
    expect(findBreach('tickets', { ...good, id: '' })?.id).toBeNull()
    expect(findBreach('queues', { id: 'q', name: 'a\0b', slug: 's', status: 'ACTIVE' })?.columns).toEqual(['name'])
  })
})

describe("a location's time zone (version 5)", () => {
  const rule = ROW_RULES.locations.find((r) => r.column === 'time_zone')!
  /** [value, SQL holds, function holds]: SQL checks the form and the abbreviations; only Intl knows which zones exist. */
  const ZONES: [unknown, boolean, boolean][] = [
    ['Europe/Zurich', true, true],
    ['Asia/Calcutta', true, true],
    ['America/Argentina/Buenos_Aires', true, true],
    ['America/Port-au-Prince', true, true],
    ['Etc/GMT+5', true, true],
    ['UTC', true, true],
    [null, true, true],
    ['Europe/Atlantis', true, false],
    ['Not_A_Zone', true, false],
    ['IST', false, false],
    ['cst', false, false],
    ['+05:30', false, false],
    ['UTC+1', false, false],
    ['gmt-3', false, false],
    ['Europe/ Zurich', false, false],
    [' Europe/Zurich', false, false],
    ['Europe/Zurich\0', false, false],
    ['', false, false],
    ['A'.repeat(65), false, false],
    [5, false, false],
    [new Uint8Array([69]), false, false],
  ]
  test('the SQL refuses what it can see, the function what Intl knows too; the SQL never refuses a zone the function takes', () => {
    for (const [value, sql, fn] of ZONES) {
      expect({ value, holds: sqlHolds(rule, value) }).toEqual({ value, holds: sql })
      expect({ value, holds: valueHolds(rule, value) }).toEqual({ value, holds: fn })
    }
  })

  test('the rule exists from version 5 on: the triggers of version 4 do not name the column', () => {
    const older = new Database(':memory:')
    migrate(older, TENANT_MIGRATIONS, 4)
    expect(older.query("SELECT count(*) AS n FROM sqlite_master WHERE sql LIKE '%time_zone%'").get()).toEqual({ n: 0 })
    expect(scanBreaches(older, 10)).toEqual({ count: 0, rows: [] })
    older.close()
  })
})

describe('schema version 4 refuses rows that break the rules', () => {
  const structure = `
    INSERT INTO locations (id, name, slug) VALUES ('l', 'L', 'l');
    INSERT INTO queues (id, location_id, name, slug) VALUES ('q', 'l', 'Q', 'q');`
  const insert = (column: string, value: unknown) =>
    db
      .query(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, called_at) VALUES ('t', 1, 'q', 'l', 'WAITING', '2026-03-01T08:00:00.000Z', NULL)`)
      .run() && db.query(`UPDATE tickets SET "${column}" = ? WHERE id = 't'`).run(value as never)

  test.each([
    ['called_at', new Uint8Array([0, 255]), 'tickets.called_at must be a UTC instant'],
    ['called_at', '2026-03-01 08:00:00', 'tickets.called_at must be a UTC instant'],
    ['number', 'abc', 'tickets.number must be an integer from 0 to 2147483647'],
    ['number', 3_000_000_000, 'tickets.number must be an integer'],
    ['number', 9_007_199_254_740_993n, 'tickets.number must be an integer'],
    ['queue_id', 'q\0', 'tickets.queue_id must be a non-empty text without NUL characters'],
    ['id', '', 'tickets.id must be a non-empty text'],
  ])('an update of %s to %p is refused', (column, value, message) => {
    db.exec(structure)
    expect(() => insert(column, value)).toThrow(`tenant contract: ${message}`)
    // The writer's statement failed as a whole: the row kept its good values.
    expect(scanBreaches(db, 10).count).toBe(0)
  })

  test('an insert is refused as an update is, in every table of the contract', () => {
    expect(() => db.exec(`INSERT INTO locations (id, name, slug) VALUES ('', 'L', 'l')`)).toThrow('tenant contract: locations.id')
    expect(() => db.exec(`INSERT INTO device_sessions (id, started_at) VALUES ('d', '2026-03-01')`)).toThrow('tenant contract: device_sessions.started_at')
    db.exec(structure)
    expect(() => db.exec(`INSERT INTO queues (id, location_id, name, slug) VALUES ('q2', 'l', x'00', 'q2')`)).toThrow('tenant contract: queues.name')
    expect(() => db.exec(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('t', 1, 'q', 'l', 'WAITING', '2026-03-01T08:00:00.000Z')`)).not.toThrow()
  })

  test('a good row of every shape goes in: the rules refuse nothing the contract allows', () => {
    db.exec(structure)
    db.exec(`INSERT INTO device_sessions (id, location_id, device_name, started_at, ended_at) VALUES ('d', 'l', NULL, '2026-03-01T07:00:00.000Z', '2026-03-01T17:00:00.000Z')`)
    db.exec(`INSERT INTO tickets VALUES ('t', ${MAX_TICKET_NUMBER}, 'q', 'l', 'COMPLETED', '2026-03-01T08:00:00.000Z', '2026-03-01T08:01:00.000Z',
      '2026-03-01T08:02:00.000Z', NULL, NULL, NULL, 'd', 'Zoë', 'notes', 3, 'hash')`)
    expect(scanBreaches(db, 10)).toEqual({ count: 0, rows: [] })
  })
})

describe('the served columns in SQL, over a selection under the property names', () => {
  test('finds the row a selection would serve that breaks a rule, and ignores the personal columns', () => {
    const older = new Database(':memory:')
    migrate(older, TENANT_MIGRATIONS.slice(0, 3))
    older.exec(`INSERT INTO locations VALUES ('l', 'L', 'l'); INSERT INTO queues (id, location_id, name, slug) VALUES ('q', 'l', 'Q', 'q');
      INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, party_size, notes) VALUES
        ('good', 1, 'q', 'l', 'WAITING', '2026-03-01T08:00:00.000Z', 'not a number', x'00'),
        ('bad', 2, 'q', 'l', 'WAITING', '2026-03-01T09:00:00.000Z', 1, NULL);
      UPDATE tickets SET called_at = x'00ff' WHERE id = 'bad';`)
    const selection = `SELECT id AS id, number AS number, queue_id AS queueId, location_id AS locationId, status AS status, created_at AS createdAt,
      called_at AS calledAt, completed_at AS completedAt, cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt,
      called_by_device_session_id AS calledByDeviceSessionId FROM tickets`
    const broken = (where: string) => older.query(`SELECT id FROM (${selection} ${where}) WHERE NOT (${servedRowSql('tickets')})`).all()
    expect(broken('')).toEqual([{ id: 'bad' }])
    expect(broken(`WHERE created_at < '2026-03-01T08:30:00.000Z'`)).toEqual([])
    older.close()
  })
})

test('the triggers of version 4 are all there after the migration, and missed when one is dropped', () => {
  const present = () => (db.query(CONTRACT_TRIGGERS_PRESENT_SQL).get() as { present: number }).present
  expect(present()).toBe(1)
  db.exec('DROP TRIGGER tickets_contract_before_update')
  expect(present()).toBe(0)
})
