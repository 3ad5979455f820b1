'use strict';
/*
 * One writer per event log, the same lock the native log takes, so a native
 * writer and a Node.js writer refuse each other: an exclusive flock(2) on
 * `<log>.lock` (a file of its own, because the log itself is replaced by
 * renames) held from open to close, and one on the log file itself each
 * time it is opened (a second writer reaching the same file by another name
 * is refused too).
 *
 * Node.js has no flock, so a small shell holds the locks for this process:
 * it opens the files and locks them with util-linux's `flock` tool, and keeps
 * them while its stdin is open. When this process ends, however it ends
 * (even by SIGKILL), the pipe closes, the shell exits and the kernel drops
 * the locks: a crash never leaves a log locked.
 */
const { spawn } = require('node:child_process');

/* Commands, one a line: `L path` locks the lock file (fd 9, created if
   missing), `F path` the log file (fd 8, which must exist; the one locked
   before is let go). Answers one line: flock's exit status (0 taken, 1 held
   by another), 100 when the file can not be opened, 127 when `flock` is
   missing. `command exec` keeps a failed redirection from ending the shell. */
const HOLDER = `
while IFS= read -r cmd; do
  p=\${cmd#? }
  case $cmd in
    "L "*) if command exec 9>>"$p"; then flock -xn 9; echo $?; else echo 100; fi ;;
    "F "*) command exec 8<&-; if command exec 8<"$p"; then flock -xn 8; echo $?; else echo 100; fi ;;
  esac
done 2>/dev/null`;

class WriterLock {
  #child;
  #waiting = [];
  #buffered = '';
  #exited = false;
  #released = false;
  #ended;

  constructor(child) {
    this.#child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      this.#buffered += text;
      let at;
      while ((at = this.#buffered.indexOf('\n')) >= 0) {
        const line = this.#buffered.slice(0, at);
        this.#buffered = this.#buffered.slice(at + 1);
        this.#waiting.shift()?.resolve(Number(line));
      }
      if (this.#waiting.length === 0) child.stdout.unref();
    });
    const gone = (error) => {
      this.#exited = true;
      for (const w of this.#waiting.splice(0)) w.reject(error);
    };
    this.#ended = new Promise((resolve) => {
      child.on('error', (e) => { gone(e); resolve(); });
      child.on('exit', () => { gone(new Error('the lock holder process ended')); resolve(); });
    });
    child.stdin.on('error', () => {});
    // The holder never keeps this process alive.
    child.unref();
    child.stdin.unref();
    child.stdout.unref();
  }

  /* Takes the writer's lock of the log at `log` (its `<log>.lock`), without
     waiting. Throws an error whose `reason` is 'in-use' when another writer
     holds it, 'no-flock' when the flock tool is missing, 'path' for a path
     it can not name, 'io' otherwise. */
  static async acquire(log) {
    // The holder reads paths a line at a time.
    if (/[\n\r]/.test(log)) throw Object.assign(new Error('a log path with a line break can not be locked'), { reason: 'path' });
    const child = spawn('sh', ['-c', HOLDER], { stdio: ['pipe', 'pipe', 'ignore'] });
    const lock = new WriterLock(child);
    try {
      await lock.#take('L', `${log}.lock`, `${log}.lock`);
    } catch (error) {
      await lock.release();
      throw error;
    }
    return lock;
  }

  /* Locks the log file itself (just opened at `log`). */
  lockFile(log) {
    return this.#take('F', log, log);
  }

  #ask(line) {
    if (this.#exited) return Promise.reject(new Error('the lock holder process ended'));
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#child.stdout.ref();
      this.#child.stdin.write(`${line}\n`);
    });
  }

  async #take(op, path, named) {
    let status;
    try {
      status = await this.#ask(`${op} ${path}`);
    } catch (error) {
      // No `sh` to start (Windows, a bare container): no lock can be had here.
      const hint = error.code === 'ENOENT' ? ' (pass writerLock: false to go without)' : '';
      throw Object.assign(new Error(`could not start the lock holder (sh): ${error.message}${hint}`), { reason: 'io' });
    }
    if (status === 0) return;
    if (status === 1) throw Object.assign(new Error(`${named} is locked by another writer`), { reason: 'in-use' });
    if (status === 127) {
      throw Object.assign(new Error("the 'flock' tool (util-linux) is not installed: the writer lock can not be taken (pass writerLock: false to go without)"), { reason: 'no-flock' });
    }
    throw Object.assign(new Error(`could not open ${path} to lock it`), { reason: 'io' });
  }

  /* Whether the holder ended without being asked to (killed): the locks
     are gone, and another writer may have taken the log since. */
  get lost() {
    return this.#exited && !this.#released;
  }

  /* Lets every lock go: resolves once the holder exited (it does when its
     stdin closes), so another writer may open the log at once. */
  release() {
    this.#released = true;
    if (!this.#exited) {
      this.#exited = true;
      // Held until it exits, so `await close()` resumes after it.
      this.#child.ref();
      this.#child.stdin.end();
    }
    return this.#ended;
  }
}

module.exports = { WriterLock };
