import { createContext } from 'react';
import type { MembershipConfig } from './config.js';

/** The resolved config; null outside a ready `MembershipProvider`. */
export const MembershipConfigContext = createContext<MembershipConfig | null>(null);
MembershipConfigContext.displayName = 'GatehouseMembershipConfig';
