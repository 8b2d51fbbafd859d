// A test double of @clerk/react, installed only at the module boundary with vi.mock.
// It records what ClerkProvider was booted with and how <Show> was used, and lets tests
// choose what useUser returns. (test/real-clerk.test.tsx runs the real @clerk/react.)
import type { ReactNode } from 'react';

export const clerkCalls: { providerProps: Record<string, unknown>[]; showProps: Record<string, unknown>[] } = {
  providerProps: [],
  showProps: [],
};
export const userState: { value: { isLoaded: boolean; isSignedIn: boolean | undefined; user: unknown } } = {
  value: { isLoaded: false, isSignedIn: undefined, user: undefined },
};

export function resetClerkDouble(): void {
  clerkCalls.providerProps = [];
  clerkCalls.showProps = [];
  userState.value = { isLoaded: false, isSignedIn: undefined, user: undefined };
}

export function ClerkProvider(props: Record<string, unknown> & { children?: ReactNode }) {
  clerkCalls.providerProps.push(props);
  return <div data-testid="clerk-provider">{props.children}</div>;
}
export function useUser() {
  return userState.value;
}
export function SignIn() {
  return <div data-testid="clerk-sign-in" />;
}
export function SignUp(props: { routing?: string }) {
  return <div data-testid="clerk-sign-up" data-routing={props.routing ?? ''} />;
}
export function UserButton() {
  return <div data-testid="clerk-user-button" />;
}
// Clerk Core 3's <Show>, for the shorthands only: signed-in / signed-out after load.
export function Show({ children, ...rest }: { children?: ReactNode; when: unknown; treatPendingAsSignedOut?: boolean }) {
  clerkCalls.showProps.push(rest);
  const { isLoaded, isSignedIn } = userState.value;
  if (!isLoaded) return null;
  if (rest.when === 'signed-in') return <>{isSignedIn ? children : null}</>;
  if (rest.when === 'signed-out') return <>{isSignedIn ? null : children}</>;
  throw new Error(`clerk double: Show when=${String(rest.when)} is not modelled`);
}
export function RedirectToSignIn() {
  return <div data-testid="clerk-redirect-to-sign-in" />;
}
