import { defineConfig } from 'vitest/config';

// Unit tests only: browser/browser.test.mjs runs against a real gateway (run-against-gateway.sh).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
