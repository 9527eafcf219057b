/**
 * @module
 * Account and key operations shared by the command line and the admin API. Every refusal is a
 * `GatewayError` whose message says what to do; callers render it as text or JSON.
 */
import type { Config } from '../config/index.ts'
import type { AccountRecord, KeyRecord, Store } from '../store/index.ts'
import type { Clock } from '../util/clock.ts'
import { iso } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'
import {
  applyPatch,
  checkWithinPlan,
  type KeyLimits,
  type KeyLimitsPatch,
  keyLimitsView,
  NO_LIMITS,
  noOwnLimits,
  requireChange,
} from './key-limits.ts'
import { displayPrefix, generateKey, hashKey, looksLikeKey, newKeyId } from './keys.ts'
import {
  accountCursor,
  accountPage,
  keyCursor,
  keyPage,
  type ListPage,
  type PageQuery,
  pageOf,
} from './list-page.ts'
import { planEnd } from './plan-end.ts'
import { currentPlan } from './plans.ts'
import { type KeyView, keyView, type NewKey, planChangeView, shown } from './views.ts'

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/

/** How many times `setPlan` decides again after being overtaken by other plan changes. */
const MAX_PLAN_ATTEMPTS = 50

export interface AccountView {
  id: number
  name: string
  plan: string
  enabled: boolean
  plan_status: 'active' | 'expired'
  plan_started_at: string | null
  plan_expires_at: string | null
  remaining_days: number | null
  created_at: string | null
}

/**
 * What `setEnabled` left, for its audit line (the admin API's and the command line's alike): the
 * state, and on a disable the console sessions it ended (0 said, not left out).
 */
export const enabledChange = (r: { account: AccountView; sessionsEnded: number }) =>
  r.account.enabled ? { enabled: true } : { enabled: false, sessions_ended: r.sessionsEnded }

/**
 * What `setKeyState` left, for its audit line (the admin API's and the command line's alike): the
 * state, and on a disable or revoke the console sessions it ended (0 said, not left out).
 */
export const keyStateChange = (r: { key: KeyView; sessionsEnded: number }) =>
  r.key.state === 'enabled' ? { state: r.key.state } : { state: r.key.state, sessions_ended: r.sessionsEnded }

/** 409: a revoked key is revoked for good; every change to it but revoking again is refused. */
const revoked = (id: string) =>
  new GatewayError(409, 'key_revoked', `key ${shown(id)} is revoked for good; create a new key instead`)

export class AccountService {
  constructor(
    readonly store: Store,
    readonly config: Config,
    readonly clock: Clock,
  ) {}

  async view(a: AccountRecord): Promise<AccountView> {
    const s = await currentPlan(this.store, this.config, a, this.clock.now())
    return {
      id: s.account.id,
      name: s.account.name,
      plan: s.name,
      enabled: s.account.enabled,
      plan_status: s.status,
      plan_started_at: iso(s.account.planStartedAt),
      plan_expires_at: iso(s.expiresAt),
      remaining_days: s.remainingDays,
      created_at: iso(s.account.createdAt),
    }
  }

  /** `expiresAt` (epoch ms) sets the plan's end directly; else `days` from now, else the plan's own. */
  async createAccount(
    name: string,
    planName?: string,
    days?: number,
    expiresAt?: number,
  ): Promise<AccountView> {
    if (!NAME.test(name)) {
      throw new GatewayError(
        400,
        'invalid_value',
        `account name '${shown(name)}' must be 1-64 letters, digits, . _ @ -`,
        {
          param: 'name',
        },
      )
    }
    const plan = this.plan(planName ?? this.config.defaultPlan)
    if (await this.store.getAccount(name)) {
      throw new GatewayError(
        409,
        'account_exists',
        `account '${shown(name)}' already exists; use accounts set-plan to change it`,
      )
    }
    const now = this.clock.now()
    const length = days ?? plan.days ?? null
    const account = await this.store.createAccount({
      name,
      plan: planName ?? this.config.defaultPlan,
      planStartedAt: now,
      planExpiresAt: planEnd(now, length, expiresAt, false),
      now,
    })
    return this.view(account)
  }

  async getAccount(name: string): Promise<AccountRecord> {
    const a = await this.store.getAccount(name)
    if (!a) {
      throw new GatewayError(
        404,
        'account_not_found',
        `no account named '${shown(name)}' (see: switchyard accounts list)`,
      )
    }
    return a
  }

  async listAccounts(): Promise<AccountView[]> {
    return Promise.all((await this.store.listAccounts()).map((a) => this.view(a)))
  }

  /** One page of accounts, by id (the admin API's list; see list-page.ts). */
  async accountsPage(q: PageQuery): Promise<ListPage<AccountView>> {
    const page = accountPage(q)
    const rows = await this.store.listAccounts({ ...page, limit: page.limit + 1 })
    return pageOf(
      rows,
      page.limit,
      (a) => this.view(a),
      (a) => accountCursor(a.id),
    )
  }

  /**
   * Upgrade, downgrade or renew, effective at once. Renewing the same plan before it ends
   * extends it from its current end, so paid days are not lost; any other change starts now.
   *
   * Decided on the account as read, written only while it is still so (its plan and end): two
   * renewals made together (two processes, two admin calls) both read the same end, and written
   * unconditionally both extended from it, so one renewal's days were lost. Overtaken, the change
   * is decided again on the account as it now is: the second renewal extends from the first's end.
   */
  async setPlan(name: string, planName: string, days?: number, expiresAt?: number): Promise<AccountView> {
    const plan = this.plan(planName)
    const length = days ?? plan.days ?? null
    let account = await this.getAccount(name)
    // Each retry follows a change that another writer did make, so this bounds only a storm.
    for (let attempt = 0; attempt < MAX_PLAN_ATTEMPTS; attempt++) {
      const now = this.clock.now()
      const renewing =
        expiresAt === undefined &&
        days !== 0 &&
        account.plan === planName &&
        account.planExpiresAt !== null &&
        account.planExpiresAt > now
      const from = renewing ? account.planExpiresAt! : now
      const write = await this.store.setAccountPlan(
        account.id,
        {
          plan: planName,
          startedAt: renewing ? account.planStartedAt : now,
          expiresAt: planEnd(from, length, expiresAt, renewing),
          reason: renewing
            ? 'renewed'
            : account.plan === planName
              ? 'restarted'
              : `changed from ${account.plan}`,
          createdAt: now,
        },
        { plan: account.plan, expiresAt: account.planExpiresAt },
      )
      if (write.written) return this.view(write.account)
      account = write.account
    }
    throw new GatewayError(
      409,
      'account_busy',
      `account '${shown(name)}' changed plan ${MAX_PLAN_ATTEMPTS} times while this change was being made; nothing was written by it, see the account and try again.`,
    )
  }

  /**
   * Disabling the account ends its key holders' console sessions, as disabling a key ends the
   * key's: a session dies with its credential, and enabling again (before any look at the session
   * found it unbound) must not bring it back. `sessionsEnded`: how many it ended, for the audit
   * line (0 when enabling).
   */
  async setEnabled(name: string, enabled: boolean): Promise<{ account: AccountView; sessionsEnded: number }> {
    const account = await this.getAccount(name)
    const updated = await this.store.setAccountEnabled(account.id, enabled)
    const sessionsEnded = enabled ? 0 : await this.store.endSessions({ accountId: account.id })
    return { account: await this.view(updated), sessionsEnded }
  }

  async planHistory(name: string) {
    const account = await this.getAccount(name)
    return (await this.store.planHistory(account.id)).map(planChangeView)
  }

  /** `limits`: the key's own (see key-limits.ts); refusals name the field under `paramPrefix`. */
  async createKey(
    accountName: string,
    label?: string,
    limits?: KeyLimitsPatch,
    paramPrefix = 'limits.',
  ): Promise<NewKey> {
    const account = await this.getAccount(accountName)
    const own = limits ? await this.keyLimitsWithin(account, NO_LIMITS, limits, paramPrefix) : null
    const key = generateKey()
    const rec = await this.store.createKey({
      id: newKeyId(),
      accountId: account.id,
      name: label ?? null,
      prefix: displayPrefix(key),
      hash: hashKey(key),
      now: this.clock.now(),
      limits: own,
    })
    return {
      id: rec.id,
      key,
      prefix: rec.prefix,
      account: account.name,
      name: rec.name,
      limits: keyLimitsView(rec.limits),
    }
  }

  /** Changes a key's own limits: a field absent is kept, null clears it; at least one is given. */
  async setKeyLimits(id: string, patch: KeyLimitsPatch, paramPrefix = ''): Promise<KeyView> {
    requireChange(patch, paramPrefix)
    const k = await this.getKey(id)
    if (k.state === 'revoked') throw revoked(id)
    const account = await this.getAccount(k.accountName)
    const limits = await this.keyLimitsWithin(account, k.limits ?? NO_LIMITS, patch, paramPrefix)
    return keyView(await this.store.setKeyLimits(id, limits), this.clock.now())
  }

  /** The key limits after `patch`, checked against the plan the account is on now; null when none. */
  private async keyLimitsWithin(
    account: AccountRecord,
    current: KeyLimits,
    patch: KeyLimitsPatch,
    paramPrefix: string,
  ): Promise<KeyLimits | null> {
    const next = applyPatch(current, patch, paramPrefix)
    const state = await currentPlan(this.store, this.config, account, this.clock.now())
    checkWithinPlan(next, state.name, state.plan, this.config, paramPrefix)
    return noOwnLimits(next) ? null : next
  }

  async listKeys(accountName?: string): Promise<KeyView[]> {
    const accountId = accountName === undefined ? undefined : (await this.getAccount(accountName)).id
    const now = this.clock.now()
    return (await this.store.listKeys(accountId)).map((k) => keyView(k, now))
  }

  /** One page of keys (of one account), oldest first (the admin API's list; see list-page.ts). */
  async keysPage(accountName: string | undefined, q: PageQuery): Promise<ListPage<KeyView>> {
    const page = keyPage(q)
    const accountId = accountName === undefined ? undefined : (await this.getAccount(accountName)).id
    const rows = await this.store.listKeys(accountId, { ...page, limit: page.limit + 1 })
    const now = this.clock.now()
    return pageOf(rows, page.limit, (k) => keyView(k, now), keyCursor)
  }

  async getKey(id: string): Promise<KeyRecord> {
    const k = await this.store.getKey(id)
    if (!k && looksLikeKey(id)) throw await this.notAnId(id)
    if (!k)
      throw new GatewayError(
        404,
        'key_not_found',
        `no key with id '${shown(id)}' (see: switchyard keys list)`,
      )
    return k
  }

  /**
   * A key itself where its id belongs: the answer names the id (found by the key's hash) and
   * quotes the key only by its display prefix, so the error never echoes a secret.
   */
  private async notAnId(key: string): Promise<GatewayError> {
    const found = await this.store.findKeyByHash(hashKey(key))
    const which = found ? `its id is ${found.key.id}` : 'and no key here has it'
    return new GatewayError(
      404,
      'key_not_found',
      `${displayPrefix(key)}… is a key itself, not a key id (ids start with key_); ${which} (see: switchyard keys list)`,
    )
  }

  async keyView(id: string): Promise<KeyView> {
    return keyView(await this.getKey(id), this.clock.now())
  }

  /** A disable or revoke ends the key's console sessions; `sessionsEnded` says how many. */
  async setKeyState(
    id: string,
    state: 'enabled' | 'disabled' | 'revoked',
  ): Promise<{ key: KeyView; sessionsEnded: number }> {
    const k = await this.getKey(id)
    if (k.state === 'revoked' && state !== 'revoked') throw revoked(id)
    const updated = await this.store.setKeyState(id, state)
    const sessionsEnded = state === 'enabled' ? 0 : await this.store.endSessions({ keyId: id })
    return { key: keyView(updated, this.clock.now()), sessionsEnded }
  }

  async rotateKey(id: string): Promise<NewKey> {
    const k = await this.getKey(id)
    if (k.state === 'revoked') throw revoked(id)
    const key = generateKey()
    const rec = await this.store.rotateKey(id, hashKey(key), displayPrefix(key), this.clock.now())
    return {
      id: rec.id,
      key,
      prefix: rec.prefix,
      account: rec.accountName,
      name: rec.name,
      limits: keyLimitsView(rec.limits),
    }
  }

  /** Like enable and rotate, refused for a revoked key: nothing it does could matter again. */
  async unsuspendKey(id: string): Promise<KeyView> {
    if ((await this.getKey(id)).state === 'revoked') throw revoked(id)
    return keyView(await this.store.setKeySuspended(id, null), this.clock.now())
  }

  private plan(name: string) {
    const plan = this.config.plans[name]
    if (!plan) {
      throw new GatewayError(
        400,
        'plan_not_found',
        `no plan named '${shown(name)}'; configured plans: ${Object.keys(this.config.plans).join(', ')}`,
        { param: 'plan' },
      )
    }
    return plan
  }
}
