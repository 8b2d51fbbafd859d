export { MembershipProvider, clerkBootProps, type MembershipProviderProps } from './provider.js';
export { useMember, useMembershipConfig, type MemberState } from './hooks.js';
export { SignUp, SignIn, UserButton, SignedIn, SignedOut, RedirectToSignIn, type SignUpProps, type SignedInOutProps } from './components.js';
export { MembershipError, isMembershipError, type MembershipErrorCode } from './errors.js';
export {
  DEFAULT_BASE_URL,
  checkApiKey,
  configUrl,
  fetchMembershipConfig,
  parseConfig,
  type KeyCheck,
  type MembershipConfig,
} from './config.js';
