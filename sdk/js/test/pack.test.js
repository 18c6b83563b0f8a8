// The package as users get it: `npm pack`, installed into a fresh project
// without the registry, imported both ways (ESM and CommonJS) and run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('npm pack installs offline into a fresh project and runs as ESM and CommonJS', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'expd-pack-'));
  try {
    const quiet = { cwd: dir, encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } };
    const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir, pkgDir], quiet));
    const tarball = join(dir, packed[0].filename);
    const files = packed[0].files.map((f) => f.path);
    // What users need, and none of the tests or scripts.
    for (const want of ['package.json', 'index.d.ts', 'README.md', 'src/index.js', 'dist/cjs/index.cjs']) assert.ok(files.includes(want), `${want} missing from the tarball`);
    assert.ok(!files.some((f) => f.startsWith('test/')), 'tests must not ship');

    const app = join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true }));
    execFileSync(npm, ['install', '--offline', '--no-save', tarball], { ...quiet, cwd: app });
    const installed = JSON.parse(readFileSync(join(app, 'node_modules/expd/package.json'), 'utf8'));
    assert.equal(installed.license, 'Apache-2.0');

    // Local bucketing on a config given inline: no server needed.
    const use = (api) => `
      const { ConfigSnapshot, VERSION, bucketOf } = ${api};
      const cfg = ConfigSnapshot.parse(${JSON.stringify(sampleConfig())}, null);
      console.log(JSON.stringify({ version: VERSION, found: cfg.find('pack-check') !== null, bucket: typeof bucketOf }));
    `;
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e', `import * as expd from 'expd';\n${use('expd')}`], { ...quiet, cwd: app });
    const cjs = execFileSync(process.execPath, ['-e', use("require('expd')")], { ...quiet, cwd: app });
    for (const out of [esm, cjs]) {
      assert.deepEqual(JSON.parse(out.trim()), { version: installed.version, found: true, bucket: 'function' });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function sampleConfig() {
  const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
  const config = structuredClone(scenario.configs[0]);
  config.experiments[0].name = 'pack-check';
  return config;
}
