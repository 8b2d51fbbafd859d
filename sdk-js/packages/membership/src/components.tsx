import { SignUp as ClerkSignUp } from '@clerk/clerk-react';
import { useContext, useEffect, type ComponentProps, type ReactNode } from 'react';
import { MembershipConfigContext } from './context.js';

export { RedirectToSignIn, SignedIn, SignedOut, SignIn, UserButton } from '@clerk/clerk-react';

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
