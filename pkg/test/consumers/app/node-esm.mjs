// An ES module program that imports the installed package; it must exit by itself.
import * as leasehold from 'leasehold';
import { run } from './run.js';

console.log(JSON.stringify(await run(leasehold)));
