/**
 * New slots announced by the node's PubSub WebSocket, so that the follower reads a block as soon as
 * the node has it instead of at its next poll. Only a wake-up: each notification has the follower
 * run the same step polling runs (getSlot, getBlocks, getBlock, the fork check), which stays the
 * single reader of blocks, so a notification can neither add nor lose a block.
 *
 * Which subscription: `blockSubscribe` at the configured commitment (without transactions; a
 * notification is a block the follower can read at once) where the node offers it, else
 * `slotSubscribe` (every slot the node starts; the step's getSlot at the configured commitment
 * says what can be read). The client is @solana/kit's RPC subscriptions (WebSocket, kept alive by
 * its pings).
 *
 * Fallback: a subscription that is refused, a socket that cannot be opened or closes, or one that
 * has notified nothing for `wsSilenceMs`, puts the follower back on polling; the socket is opened
 * again after 0.5 s, then after twice as long each time (at most `wsRetryMaxMs`) until a
 * subscription is up again.
 */
import { createSolanaRpcSubscriptions_UNSTABLE } from '@solana/kit';

/** How the follower learns of new slots: a block or slot subscription, or polling (none up). */
export type FollowMode = 'block_subscription' | 'slot_subscription' | 'polling';

export interface SlotSubscriptionOptions {
  readonly chain: string;
  readonly url: string;
  readonly commitment: 'confirmed' | 'finalized';
  readonly silenceMs: number;
  readonly retryMaxMs: number;
  /** Called with the slot of each notification. */
  readonly onSlot: (slot: number) => void;
  /** Called when a subscription is up (again): what came while none was up is read at once. */
  readonly onUp: () => void;
  readonly log: (line: string) => void;
}

const FIRST_RETRY_MS = 500;

/** The endpoint as logged: scheme, host and port only (a provider's key may sit in its path or query). */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'the configured endpoint';
  }
}

export class SlotSubscription {
  mode: FollowMode = 'polling';
  /** Notifications received, and when the last one came (ms since the epoch, 0: none yet). */
  notifications = 0;
  lastNotificationAt = 0;
  /** Subscriptions lost once up (the socket closed or silent): polling took over each time. */
  fallbacks = 0;
  lastError = '';
  private closed = false;
  private abort: AbortController | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryWake: (() => void) | null = null;
  /** Whether the node refused blockSubscribe (not asked again on the same endpoint). */
  private noBlockSubscribe = false;
  private readonly done: Promise<void>;

  constructor(private readonly options: SlotSubscriptionOptions) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    let wait = FIRST_RETRY_MS;
    /** The failure logged last: the same failure again (a node without PubSub) is not logged at every attempt. */
    let logged: string | null = null;
    while (!this.closed) {
      const up = await this.once();
      if (this.closed) break;
      if (up) {
        wait = FIRST_RETRY_MS;
        this.fallbacks++;
        logged = null;
      }
      if (this.lastError !== logged) this.options.log(`${this.options.chain}: no subscription (${this.lastError}); polling, the socket is tried again in ${(wait / 1000).toFixed(1)} s${up ? '' : ', then less often up to every ' + Math.round(this.options.retryMaxMs / 1000) + ' s'}`);
      logged = this.lastError;
      await new Promise<void>((resolve) => {
        this.retryWake = resolve;
        this.retryTimer = setTimeout(resolve, wait);
        this.retryTimer.unref();
      });
      this.retryTimer = null;
      this.retryWake = null;
      wait = Math.min(this.options.retryMaxMs, wait * 2);
    }
  }

  /** One socket: subscribes and relays notifications until it fails, closes or falls silent; whether a subscription was up. */
  private async once(): Promise<boolean> {
    const abort = new AbortController();
    this.abort = abort;
    const o = this.options;
    let up = false;
    /** Why this socket's subscription ended or never came up. */
    let reason = '';
    let silence: NodeJS.Timeout | null = null;
    try {
      const rpc = createSolanaRpcSubscriptions_UNSTABLE(o.url);
      const signal = abort.signal;
      let stream: AsyncIterable<{ readonly slot: bigint | number } | { readonly context: { readonly slot: bigint | number } }> | null = null;
      let mode: FollowMode = 'slot_subscription';
      if (!this.noBlockSubscribe) {
        try {
          stream = await rpc
            .blockNotifications('all', { commitment: o.commitment, encoding: 'json', maxSupportedTransactionVersion: 0, showRewards: false, transactionDetails: 'none' })
            .subscribe({ abortSignal: signal });
          mode = 'block_subscription';
        } catch (err) {
          if (signal.aborted) throw err;
          // A JSON-RPC error answer (the method disabled or unknown) is a refusal; anything else a failed socket.
          if (!isRpcRefusal(err)) throw err;
          this.noBlockSubscribe = true;
        }
      }
      stream ??= await rpc.slotNotifications().subscribe({ abortSignal: signal });
      up = true;
      this.mode = mode;
      this.lastError = '';
      this.lastNotificationAt = Date.now();
      o.log(`${o.chain}: ${mode === 'block_subscription' ? 'blockSubscribe' : 'slotSubscribe'} at ${shown(o.url)}: new slots are read as the node announces them`);
      o.onUp();
      silence = setInterval(() => {
        if (Date.now() - this.lastNotificationAt < o.silenceMs) return;
        reason = `no notification for ${Math.round(o.silenceMs / 1000)} s`;
        abort.abort();
      }, Math.min(1_000, Math.max(50, o.silenceMs / 4)));
      for await (const n of stream) {
        const slot = 'context' in n ? n.context.slot : n.slot;
        this.notifications++;
        this.lastNotificationAt = Date.now();
        o.onSlot(Number(slot));
      }
      if (reason === '') reason = 'the node closed the subscription';
    } catch (err) {
      if (reason === '') reason = describe(err);
    } finally {
      if (!this.closed) this.lastError = reason;
      if (silence !== null) clearInterval(silence);
      this.mode = 'polling';
      abort.abort();
      this.abort = null;
    }
    return up;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort?.abort();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryWake?.();
    await this.done;
  }
}

/** Whether a failed subscribe was the node's JSON-RPC error answer (kit raises those with the answer's code in their context). */
function isRpcRefusal(err: unknown): boolean {
  const ctx = (err as { context?: { __code?: unknown; code?: unknown } } | null)?.context;
  if (ctx && (typeof ctx.__code === 'number' || typeof ctx.code === 'number')) {
    const code = Number(ctx.__code ?? ctx.code);
    // Kit's own error codes for a socket (closed, failed to connect) are not JSON-RPC answers.
    return code < 0 && code > -33_000;
  }
  return false;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message !== '' ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}
