import { packageTests } from '../../vitest.shared';

export default packageTests(['test/**/*.test.mjs']);
