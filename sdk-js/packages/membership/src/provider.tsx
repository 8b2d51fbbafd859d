import { ClerkProvider } from '@clerk/react';
import { useEffect, useMemo, useState, type ComponentProps, type ReactNode } from 'react';
import { checkApiKey, DEFAULT_BASE_URL, fetchMembershipConfig, type MembershipConfig } from './config.js';
import { MembershipConfigContext } from './context.js';
import { MembershipError } from './errors.js';

type ClerkProviderProps = ComponentProps<typeof ClerkProvider>;

export interface MembershipProviderProps {
  /** Project-scoped publishable key for the membership product (`pk_live_...` / `pk_test_...`). */
  apiKey: string;
  /** The gateway's membership base address. Default `http://localhost:8787/membership`. */
  baseUrl?: string;
  /** Rendered while the configuration loads. Default: nothing. */
  loadingFallback?: ReactNode;
  /** Rendered when the configuration cannot be loaded. Default: nothing (the error is logged). */
  errorFallback?: (error: MembershipError) => ReactNode;
  /**
   * Extra props for Clerk's `ClerkProvider` (`signInUrl`, `routerPush`, `afterSignOutUrl`, ...).
   * `publishableKey`, `domain` and `appearance` always come from the gateway's config.
   */
  clerkProps?: Record<string, unknown>;
  children?: ReactNode;
}

type State =
  | { key: string; status: 'loading' }
  | { key: string; status: 'error'; error: MembershipError }
  | { key: string; status: 'ready'; config: MembershipConfig };

/**
 * Fetches `${baseUrl}/config` with the publishable key (once per apiKey/baseUrl pair; a
 * re-render does not refetch, an unmount aborts the request), then boots Clerk's
 * `ClerkProvider` with the connection's publishable key, instance domain and appearance.
 */
export function MembershipProvider(props: MembershipProviderProps): ReactNode {
  const { apiKey, loadingFallback = null, errorFallback, clerkProps, children } = props;
  const baseUrl = props.baseUrl ?? DEFAULT_BASE_URL;
  const stateKey = `${apiKey}\n${baseUrl}`;
  const keyCheck = useMemo(() => checkApiKey(apiKey), [apiKey]);
  const [state, setState] = useState<State>({ key: stateKey, status: 'loading' });

  useEffect(() => {
    if (!keyCheck.ok) {
      // Loud on purpose: a secret key in a browser bundle is a leak, whatever the mode.
      console.error(keyCheck.error.message);
      return;
    }
    const controller = new AbortController();
    setState({ key: stateKey, status: 'loading' });
    fetchMembershipConfig(apiKey, baseUrl, controller.signal).then(
      (config) => {
        if (!controller.signal.aborted) setState({ key: stateKey, status: 'ready', config });
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        const error =
          err instanceof MembershipError
            ? err
            : new MembershipError('NETWORK', '@gatehouse/membership: loading the configuration failed.', { cause: err });
        if (!errorFallback) console.error(error);
        setState({ key: stateKey, status: 'error', error });
      },
    );
    return () => controller.abort();
    // errorFallback is read only to decide whether to log; it must not trigger a refetch.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stateKey, keyCheck]);

  if (!keyCheck.ok) return errorFallback ? errorFallback(keyCheck.error) : null;
  if (state.key !== stateKey || state.status === 'loading') return loadingFallback;
  if (state.status === 'error') return errorFallback ? errorFallback(state.error) : null;

  return (
    <MembershipConfigContext.Provider value={state.config}>
      <ClerkProvider {...(clerkBootProps(state.config, clerkProps) as ClerkProviderProps)}>{children}</ClerkProvider>
    </MembershipConfigContext.Provider>
  );
}

/**
 * The props Clerk is booted with. `domain` carries the instance domain: with a production
 * key Clerk then loads clerk-js from and talks to `clerk.<domain>` (which is the instance's
 * Frontend API host); a development key keeps its own `*.clerk.accounts.dev` host. No
 * `isSatellite` and no `proxyUrl` are set. With sign-up disabled no `signUpUrl` is given and
 * the "Sign up" footer link of `<SignIn/>` is hidden through `appearance`.
 */
export function clerkBootProps(config: MembershipConfig, extra?: Record<string, unknown>): Record<string, unknown> {
  const props: Record<string, unknown> = { ...(extra ?? {}) };
  delete props.publishableKey;
  delete props.domain;
  delete props.proxyUrl;
  delete props.isSatellite;
  delete props.children;
  props.publishableKey = config.idpPublishableKey;
  props.domain = config.idpInstanceDomain;

  let appearance = config.appearance ?? undefined;
  if (!config.signUpEnabled) {
    delete props.signUpUrl;
    delete props.signUpFallbackRedirectUrl;
    delete props.signUpForceRedirectUrl;
    const elements = (appearance?.elements as Record<string, unknown> | undefined) ?? {};
    appearance = { ...(appearance ?? {}), elements: { footerAction__signUp: { display: 'none' }, ...elements } };
  }
  if (appearance !== undefined) props.appearance = appearance;
  return props;
}
