export { runPipeline, rejectRequest, type PipelineDeps, type PipelineStages } from './runner.ts';
export { orderStages, type OrderedStages } from './stage-order.ts';
export { route, type EngineDeps, type ResolvedTarget, type RoutedResult } from './engine.ts';
export { callProvider, ClientGoneError, type CallOptions } from './call.ts';
export { HostGuard, isPrivateAddress, type Connector, type HostGuardOptions, type Resolver, type Route } from './host-guard.ts';
export { applyParamRules } from './params.ts';
export { GENERIC_INHERITANCE, Inheritance } from './inherit.ts';
export { createDecoder, type FrameDecoder } from './streams/decoders.ts';
export { isForwardable } from './headers.ts';
