'use strict';
/*
 * The event log's file operations (`node:fs`): reading a log that may be
 * missing, writing a new file durably, reopening a log for appends after a
 * rename, and checking the folder a log goes in before anything is touched.
 * Each failure becomes an `EventLogError` naming the operation and the path.
 */
const fs = require('node:fs');
const nodePath = require('node:path');
const { EventLogError } = require('./eventlog-input.js');

const ioError = (op, path, cause) =>
  new EventLogError(`event log ${path}: ${op} failed: ${cause.message}`, 'EVENTLOG_IO', { op, path, cause });

/* The bytes of the file at `path`, or undefined when there is none. */
function readOrMissing(path) {
  try {
    return fs.readFileSync(path);
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw ioError('read', path, error);
  }
}

/* Writes `bytes` to a new file at `file` (replacing one there) and syncs it. */
function writeDurably(file, bytes) {
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, bytes);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDir(dir) {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/* After a file was renamed to `path`: syncs its folder (so the rename is
   durable) and answers a descriptor open for appends to it. */
function reopenRenamed(path) {
  syncDir(nodePath.dirname(nodePath.resolve(path)));
  return fs.openSync(path, 'a');
}

/* Checks the path and its folder before anything is touched. */
function checkPath(path) {
  if (typeof path !== 'string' || path === '') {
    throw new EventLogError('EventLog.open: path must be a non-empty string', 'EVENTLOG_BAD_INPUT');
  }
  const dir = nodePath.dirname(nodePath.resolve(path));
  let stat;
  try {
    stat = fs.statSync(dir);
  } catch (error) {
    throw new EventLogError(`event log ${path}: folder ${dir} does not exist`, 'EVENTLOG_BAD_INPUT', { path, cause: error });
  }
  if (!stat.isDirectory()) throw new EventLogError(`event log ${path}: ${dir} is not a folder`, 'EVENTLOG_BAD_INPUT', { path });
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    throw new EventLogError(`event log ${path}: folder ${dir} is not writable`, 'EVENTLOG_BAD_INPUT', { path, cause: error });
  }
  // A folder there failed the read as EVENTLOG_IO, after its lock file was made beside it.
  const there = fs.statSync(path, { throwIfNoEntry: false });
  if (there?.isDirectory()) {
    throw new EventLogError(`event log ${path} is a folder: give the path of the log file in it (e.g. ${nodePath.join(path, 'events.log')})`, 'EVENTLOG_BAD_INPUT', { path });
  }
}

module.exports = { ioError, readOrMissing, writeDurably, reopenRenamed, checkPath };
