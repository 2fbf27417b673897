import fs from 'node:fs';
import path from 'node:path';

// /sign-assets/form.mjs: browserForm.ts and what it imports bundled by esbuild, once per process. A production build
// has it made beforehand, beside the other assets (scripts/build.ts): it holds no TypeScript to bundle.
const prebuilt = path.join(__dirname, 'assets', 'form.mjs');

/** The bundle as esbuild makes it: one minified ES module. */
export async function buildFormBundle(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [path.join(__dirname, 'browserForm.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

let bundle: Promise<string> | undefined;
/** The bundle, made on the first call; a failed build is tried again on the next. */
export function formBundle(): Promise<string> {
  bundle ??= (fs.existsSync(prebuilt) ? fs.promises.readFile(prebuilt, 'utf8') : buildFormBundle()).catch((error: unknown) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}
