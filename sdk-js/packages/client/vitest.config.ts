import { defineConfig } from 'vitest/config';

// Two projects: `unit` (no gateway: the schema freshness check and ApiError) runs in
// `npm test`; `gateway` runs the client against a real `gatehouse serve` (test/gateway.setup.ts
// starts it) in `npm run test:gateway`, which `make test-client` calls with the built binary.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          include: ['test/unit/**/*.test.ts'],
          // The freshness check runs openapi-typescript over the whole document: seconds on a
          // busy machine; the limit only stops a hang.
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'gateway',
          environment: 'node',
          include: ['test/gateway/**/*.test.ts'],
          globalSetup: ['test/gateway.setup.ts'],
          testTimeout: 20_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
