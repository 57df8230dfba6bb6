// The tests' TAP output, shared by the scripts: test(name, fn) runs fn (a sync test at
// once; an async one's promise returned, to be awaited) and prints `ok - name`, or
// `not ok - name` and the failure's stack as comments; end() prints the plan and sets
// the exit code (exit: true ends the process at once, summary: true adds a count line).
"use strict";

let passed = 0;
let failed = 0;

function pass(name) {
  passed++;
  console.log(`ok - ${name}`);
}

function fail(name, e) {
  failed++;
  console.log(`not ok - ${name}`);
  for (const line of String((e && e.stack) || e).split("\n")) console.log(`# ${line}`);
}

function test(name, fn) {
  let result;
  try {
    result = fn();
  } catch (e) {
    fail(name, e);
    return Promise.resolve();
  }
  if (result && typeof result.then === "function") {
    return result.then(() => pass(name), (e) => fail(name, e));
  }
  pass(name);
  return Promise.resolve();
}

function end({ summary = false, exit = false } = {}) {
  console.log(`1..${passed + failed}`);
  if (summary) console.log(`${passed} passed, ${failed} failed`);
  const code = failed === 0 ? 0 : 1;
  if (exit) process.exit(code);
  process.exitCode = code;
}

module.exports = { test, end };
