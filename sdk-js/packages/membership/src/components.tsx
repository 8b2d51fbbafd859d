import { Show, SignUp as ClerkSignUp } from '@clerk/react';
import { useContext, useEffect, type ComponentProps, type ReactNode } from 'react';
import { MembershipConfigContext } from './context.js';

export { RedirectToSignIn, SignIn, UserButton } from '@clerk/react';

/** Props of Clerk's own `<SignUp/>`. */
export type SignUpProps = ComponentProps<typeof ClerkSignUp>;

/**
 * Clerk's `<SignUp/>`, unless the connection has sign-up disabled: then it renders nothing
 * and warns once in the console.
 */
export function SignUp(props: SignUpProps): ReactNode {
  const config = useContext(MembershipConfigContext);
  const disabled = config !== null && !config.signUpEnabled;
  useEffect(() => {
    if (disabled) {
      console.warn('@gatehouse/membership: sign-up is disabled for this connection; <SignUp/> renders nothing.');
    }
  }, [disabled]);
  if (disabled) return null;
  return <ClerkSignUp {...props} />;
}

/**
 * Props of {@link SignedIn} and {@link SignedOut}: the props Clerk 5's components of the same
 * names took.
 */
export interface SignedInOutProps {
  children?: ReactNode;
  /** Count a session with pending tasks as signed out (Clerk's option; Clerk's default is true). */
  treatPendingAsSignedOut?: boolean;
}

/**
 * Renders its children only while a member is signed in (nothing while Clerk loads).
 * Clerk Core 3 dropped its `<SignedIn>`; this is `<Show when="signed-in">`, kept so pages
 * written against Clerk 5 keep working.
 */
export function SignedIn({ children, treatPendingAsSignedOut }: SignedInOutProps): ReactNode {
  return (
    <Show when="signed-in" treatPendingAsSignedOut={treatPendingAsSignedOut}>
      {children}
    </Show>
  );
}

/**
 * Renders its children only once Clerk has loaded and nobody is signed in. Clerk Core 3
 * dropped its `<SignedOut>`; this is `<Show when="signed-out">`.
 */
export function SignedOut({ children, treatPendingAsSignedOut }: SignedInOutProps): ReactNode {
  return (
    <Show when="signed-out" treatPendingAsSignedOut={treatPendingAsSignedOut}>
      {children}
    </Show>
  );
}
