/* `leasehold/auto`: the browser entry with its runner module already loaded
   (top-level await), for bundlers and pages that support top-level await. The
   trace ring still loads only on `await initTrace()`. */
import { init } from './browser.mjs';

await init();

export * from './browser.mjs';
export { default } from './browser.mjs';
