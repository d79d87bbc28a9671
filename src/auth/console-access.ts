import type { GatewayConfig } from '../config/schema.ts';
import type { ConsoleSessions } from './console-sessions.ts';
import type { SignInNonces } from './sign-in-nonces.ts';
import type { SignInVerifier } from './siwe/sign-in-verifier.ts';
import { validateSignInSettings, type SignInSettings } from './siwe/sign-in-settings.ts';

const LOOPBACK = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/** The console's sign-in settings: from config, else the address the gateway listens on (never a request's Host header). */
export function resolveConsoleSettings(config: GatewayConfig, listening: { host: string; port: number }): SignInSettings {
  const domain = config.console.domain ?? `${listening.host}:${listening.port}`;
  return {
    domain,
    origin: config.console.origin ?? `http://${domain}`,
    chainIds: config.console.chainIds,
    rpcUrls: config.console.rpcUrls,
  };
}

/** Everything console sign-in needs; the settings are known once the gateway listens. */
export class ConsoleAccess {
  private settings: SignInSettings | null = null;
  private signInVerifier: Promise<SignInVerifier> | null = null;

  constructor(
    readonly nonces: SignInNonces,
    readonly sessions: ConsoleSessions,
    private readonly now: () => number,
  ) {}

  /** Checks the settings at once (throws naming a bad one); the verifier itself loads on the first sign-in. */
  configure(settings: SignInSettings): void {
    this.settings = validateSignInSettings(settings);
    this.signInVerifier = null;
  }

  get domain(): string {
    return this.configured().domain;
  }

  get origin(): string {
    return this.configured().origin;
  }

  get chainIds(): number[] {
    return this.configured().chainIds;
  }

  /** The verifier, with viem (~25 MiB) loaded on the first sign-in rather than at start. */
  verifier(): Promise<SignInVerifier> {
    const settings = this.configured();
    this.signInVerifier ??= import('./siwe/sign-in-verifier.ts').then(({ SignInVerifier }) => new SignInVerifier(settings, this.now));
    return this.signInVerifier;
  }

  /** Secure cookies everywhere except plain http on this machine, where browsers would drop them. */
  get secureCookie(): boolean {
    return !LOOPBACK.test(this.origin);
  }

  private configured(): SignInSettings {
    if (!this.settings) throw new Error('the console is not configured yet: the gateway configures it once it listens');
    return this.settings;
  }
}
