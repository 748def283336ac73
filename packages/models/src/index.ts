export { KVCache, type CausalLM, type CausalLMForwardOptions } from './causal-lm.js';
