import type {
  AdminRoute,
  AttemptStage,
  CacheBackend,
  FinallyStage,
  GuardrailCheck,
  JudgeStage,
  Logger,
  PluginApi,
  ProviderAdapter,
  RequestStage,
  ResponseStage,
  Stage,
  StateStore,
  Strategy,
} from '@gateway/sdk';

interface Ordered<T> {
  item: T;
  order: number;
  seq: number;
}

/** Everything the loaded plugins contributed, in the shapes the pipeline and server read on the hot path. */
export class Registry {
  readonly providers = new Map<string, ProviderAdapter>();
  readonly strategies = new Map<string, Strategy>();
  readonly guardrails = new Map<string, GuardrailCheck>();
  readonly caches = new Map<string, CacheBackend>();
  readonly routes: { plugin: string; route: AdminRoute }[] = [];
  readonly services = new Map<string, unknown>();
  readonly closers: (() => Promise<void> | void)[] = [];
  /** Which plugin registered each provider, for the start-up listing. */
  readonly owners = new Map<string, string>();

  requestStages: RequestStage[] = [];
  requestJudges: JudgeStage[] = [];
  attemptStages: AttemptStage[] = [];
  responseStages: ResponseStage[] = [];
  responseJudges: JudgeStage[] = [];
  finallyStages: FinallyStage[] = [];
  private readonly stages: Ordered<Stage>[] = [];

  /** What the registry holds now, so that a plugin whose setup fails can be taken out again whole. */
  snapshot(): () => void {
    const maps = [this.providers, this.strategies, this.guardrails, this.caches, this.services, this.owners].map(
      (m) => [m, new Map(m as Map<string, unknown>)] as const,
    );
    const routes = this.routes.length;
    const closers = this.closers.length;
    const stages = this.stages.length;
    return () => {
      for (const [live, saved] of maps) {
        const target = live as Map<string, unknown>;
        target.clear();
        for (const [k, v] of saved) target.set(k, v);
      }
      this.routes.length = routes;
      this.closers.length = closers;
      this.stages.length = stages;
      this.sortStages();
    };
  }

  addStage(stage: Stage): void {
    this.stages.push({ item: stage, order: stage.order ?? 100, seq: this.stages.length });
    this.sortStages();
  }

  private sortStages(): void {
    const sorted = [...this.stages].sort((a, b) => a.order - b.order || a.seq - b.seq).map((s) => s.item);
    // Kept as separate arrays so the runner does no filtering per request.
    this.requestStages = sorted.filter((s): s is RequestStage => s.phase === 'request' && s.rule === 'sequential');
    this.requestJudges = sorted.filter((s): s is JudgeStage => s.phase === 'request' && s.rule === 'parallel');
    this.attemptStages = sorted.filter((s): s is AttemptStage => s.phase === 'attempt');
    this.responseStages = sorted.filter((s): s is ResponseStage => s.phase === 'response' && s.rule === 'sequential');
    this.responseJudges = sorted.filter((s): s is JudgeStage => s.phase === 'response' && s.rule === 'parallel');
    this.finallyStages = sorted.filter((s): s is FinallyStage => s.phase === 'finally');
  }

  /** The API one plugin sees; registrations are tagged with its name. */
  apiFor(name: string, deps: { env: Record<string, string | undefined>; logger: Logger; state: StateStore }): PluginApi {
    const registry = this;
    return {
      name,
      env: deps.env,
      logger: deps.logger,
      state: deps.state,
      service<T>(service: string): T {
        if (!registry.services.has(service)) throw new Error(`plugin ${name} needs service "${service}", which no loaded plugin provides`);
        return registry.services.get(service) as T;
      },
      provide<T>(service: string, value: T): void {
        registry.services.set(service, value);
      },
      provider(adapter: ProviderAdapter): void {
        const owner = registry.owners.get(adapter.id);
        if (owner && owner !== name) throw new Error(`provider "${adapter.id}" from ${name} is already registered by ${owner}`);
        registry.providers.set(adapter.id, adapter);
        registry.owners.set(adapter.id, name);
      },
      stage: (stage) => registry.addStage(stage),
      strategy: (strategy) => void registry.strategies.set(strategy.mode, strategy),
      guardrail: (check) => void registry.guardrails.set(check.id, check),
      cache: (backend) => void registry.caches.set(backend.name, backend),
      route: (route) => void registry.routes.push({ plugin: name, route }),
      onClose: (fn) => void registry.closers.push(fn),
    };
  }
}
