import { definePlugin } from '@gateway/sdk';

export default definePlugin({
  async setup() {},
});
