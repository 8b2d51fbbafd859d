import { useUser } from '@clerk/react';
import { useContext } from 'react';
import type { MembershipConfig } from './config.js';
import { MembershipConfigContext } from './context.js';

/** What {@link useMember} returns. */
export interface MemberState {
  /** Clerk's user object for the signed-in member, or null (signed out, or not loaded yet). */
  member: ReturnType<typeof useUser>['user'] | null;
  /** False until Clerk has loaded and knows whether someone is signed in. */
  isLoaded: boolean;
  /** True when a member is signed in (always false before `isLoaded`). */
  isSignedIn: boolean;
}

/** The signed-in member, from Clerk's `useUser`. Use inside `MembershipProvider`'s children. */
export function useMember(): MemberState {
  const { user, isLoaded, isSignedIn } = useUser();
  return { member: user ?? null, isLoaded: Boolean(isLoaded), isSignedIn: Boolean(isSignedIn) };
}

/**
 * The resolved connection config. Children of `MembershipProvider` only render once it
 * is loaded, so inside them this never returns null; outside a provider it throws.
 */
export function useMembershipConfig(): MembershipConfig {
  const config = useContext(MembershipConfigContext);
  if (!config) {
    throw new Error('@gatehouse/membership: useMembershipConfig() must be used inside <MembershipProvider>.');
  }
  return config;
}
