// A strict TypeScript user under moduleResolution bundler (a Vite or webpack app).
import { init, initSync, createJobRunner, createJobTraceSink, initTrace } from 'leasehold';
import * as auto from 'leasehold/auto';
// The esbuild recipe: the .wasm imported as a file (its URL), typed by esbuild-wasm.d.ts.
import wasmUrl from 'leasehold/leasehold_bg.wasm';

await init(fetch('/leasehold_bg.wasm'));
await init(wasmUrl);
initSync(new Uint8Array(0));
await initTrace();
const runner = createJobRunner({
  name: 'typed-bundler',
  intervalMs: 100,
  claim: () => null,
  perform: () => undefined,
  onEvent: createJobTraceSink({ capacity: 10 }),
});
void auto.createJobRunner;
void runner.tick();
