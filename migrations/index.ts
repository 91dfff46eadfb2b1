import { Foundation1795300641295 } from './1795300641295-foundation.js';

/** Every migration in order. `npm run migration:generate` appends to this list. */
export const MIGRATIONS: Function[] = [Foundation1795300641295];
