// A CommonJS program that requires the installed package; it must exit by itself.
const leasehold = require('leasehold');

import('./run.js').then(async ({ run }) => console.log(JSON.stringify(await run(leasehold))));
