// A test double of @clerk/clerk-react, installed only at the module boundary with vi.mock.
// It records what ClerkProvider was booted with and lets tests choose what useUser returns.
import type { ReactNode } from 'react';

export const clerkCalls: { providerProps: Record<string, unknown>[] } = { providerProps: [] };
export const userState: { value: { isLoaded: boolean; isSignedIn: boolean | undefined; user: unknown } } = {
  value: { isLoaded: false, isSignedIn: undefined, user: undefined },
};

export function resetClerkDouble(): void {
  clerkCalls.providerProps = [];
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
export function SignedIn({ children }: { children?: ReactNode }) {
  return <>{userState.value.isSignedIn ? children : null}</>;
}
export function SignedOut({ children }: { children?: ReactNode }) {
  return <>{userState.value.isLoaded && !userState.value.isSignedIn ? children : null}</>;
}
export function RedirectToSignIn() {
  return <div data-testid="clerk-redirect-to-sign-in" />;
}
