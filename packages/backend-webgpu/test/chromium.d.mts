// Types for chromium.mjs, which test/browser.test.ts imports.
import type { Browser } from 'playwright-core';

export declare const CHROMIUM: string;
/** `contents` (an ES module, imports resolved from `resolveDir`) bundled for the browser. */
export declare function bundle(contents: string, resolveDir: string): Promise<string>;
/** Serves a page that runs `script` as a module, from 127.0.0.1; `isolated`: cross-origin isolated (5 µs timers). */
export declare function serve(script: string, options?: { isolated?: boolean }): Promise<{ url: string; close: () => Promise<void> }>;
/** Headless Chromium with WebGPU on SwiftShader. */
export declare function launchChromium(): Promise<Browser>;
/** Runs `script` on a fresh page and returns what it leaves in `window.__report`, with the page's uncaught errors. */
export declare function runPage(script: string, timeoutMs: number, options?: { isolated?: boolean }): Promise<{ report: Record<string, unknown>; errors: string[] }>;
