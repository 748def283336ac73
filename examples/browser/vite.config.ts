import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { mnistDigits } from './mnist-asset';
import { mobyDickSlice } from './text-asset';

// Cross-origin isolation gives the page SharedArrayBuffer, so the CPU backend's wasm kernels run
// on Web Workers too (without it they run on one thread). Serve dist/ with the same two headers.
const crossOriginIsolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
const page = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export default defineConfig({
  server: { headers: crossOriginIsolation },
  preview: { headers: crossOriginIsolation },
  // Relative asset URLs: dist/ can be served from any path (or a file server's subfolder).
  base: './',
  // Several pages, no client-side routing: a missing file is a 404, not index.html (the fine-tuning
  // page asks a model folder of the site for its optional files and must hear "not there").
  appType: 'mpa',
  // The MNIST digits (5,000 of them) and the first 300,000 characters of Moby Dick, packed at build time.
  plugins: [mnistDigits({ perClass: 500 }), mobyDickSlice({ chars: 300_000 })],
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 1024,
    // Three pages: MNIST (index.html), the character-level GPT (gpt.html) and fine-tuning GPT-2 (finetune.html).
    rollupOptions: { input: { main: page('./index.html'), gpt: page('./gpt.html'), finetune: page('./finetune.html') } },
  },
});
