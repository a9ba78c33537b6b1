// The command line's own refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { BIN, project } from './helpers.mjs';

test('a non-loopback --http without a token is refused', () => {
  const p = project();
  const r = spawnSync(BIN, [...p.args, '--http', '0.0.0.0:0'], { env: p.env, encoding: 'utf8', timeout: 10000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /token/);
  assert.equal(r.stdout, '');
});

test('a loopback --http without a token generates one and prints it on stderr', async () => {
  const p = project();
  const r = spawnSync(BIN, [...p.args, '--http', '127.0.0.1:0'], { env: p.env, encoding: 'utf8', timeout: 1500, killSignal: 'SIGTERM' });
  assert.match(r.stderr, /bearer token .*: [0-9a-f]{64}/);
  assert.equal(r.stdout, '');
});
