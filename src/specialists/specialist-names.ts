/** Specialist names become tool names (`transfer_to_<name>`), so they stay short and plain. */
export const SPECIALIST_NAME = /^[a-z][a-z0-9_]{0,39}$/;
/** The generic path's name in handover items and in `transfer_to_generic`. */
export const GENERIC_AGENT = 'generic';
