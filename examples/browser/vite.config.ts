import { defineConfig } from 'vite';
import { mnistDigits } from './mnist-asset';

export default defineConfig({
  // Relative asset URLs: dist/ can be served from any path (or a file server's subfolder).
  base: './',
  plugins: [mnistDigits({ perClass: 500 })],
  build: { target: 'es2022', chunkSizeWarningLimit: 1024 },
});
