import { defineConfig } from 'vite';
import { mnistDigits } from './mnist-asset';

// Cross-origin isolation gives the page SharedArrayBuffer, so the CPU backend's wasm kernels run
// on Web Workers too (without it they run on one thread). Serve dist/ with the same two headers.
const crossOriginIsolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default defineConfig({
  server: { headers: crossOriginIsolation },
  preview: { headers: crossOriginIsolation },
  // Relative asset URLs: dist/ can be served from any path (or a file server's subfolder).
  base: './',
  plugins: [mnistDigits({ perClass: 500 })],
  build: { target: 'es2022', chunkSizeWarningLimit: 1024 },
});
