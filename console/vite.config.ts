// The console is served by the gateway under /console (core/server/src/console-route.ts); built by the root
// postinstall into console/dist. Hashed file names under assets/ are cached for a year by the gateway.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', reportCompressedSize: false, chunkSizeWarningLimit: 300 },
  logLevel: 'warn',
});
