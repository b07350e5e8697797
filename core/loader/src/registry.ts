import {
  type AdminRoute,
  type ConfigFieldSet,
  type GuardrailCheck,
  type Logger,
  type PluginApi,
  type ProviderAdapter,
  type ServiceToken,
  Services,
  type Stage,
  type StateStore,
  type Strategy,
} from '@gateway/sdk';

/** The owner of the services the host provides, in messages. */
export const HOST = 'the gateway';

interface Provided {
  value: unknown;
  /** The plugin that provides it, or HOST. */
  owner: string;
}

type Hook = () => Promise<void> | void;

/** Everything the loaded plugins contributed, in the shapes the pipeline and server read on the hot path. */
export class Registry {
  readonly providers = new Map<string, ProviderAdapter>();
  readonly strategies = new Map<string, Strategy>();
  readonly guardrails = new Map<string, GuardrailCheck>();
  readonly routes: { plugin: string; route: AdminRoute }[] = [];
  readonly closers: Hook[] = [];
  /** `onReady` hooks in load order, with their plugin's name for the message when one fails. */
  private readonly readyHooks: { plugin: string; fn: Hook }[] = [];
  /** By token id: a token is compared by its id, so plugins built against another copy of the SDK agree. */
  private readonly services = new Map<string, Provided>();
  /** Services are provided during setup only: once ready hooks run, every lookup must find what it will ever find. */
  private settingUp = true;
  /** Which plugin registered each provider, for the start-up listing. */
  readonly owners = new Map<string, string>();

  /** Top-level config fields declared by plugins (`api.configFields`), in load order, with the declaring plugin. */
  readonly configFields: { plugin: string; fields: ConfigFieldSet }[] = [];

  /** In registration order; the pipeline puts them in running order (`orderStages`) once every plugin is set up. */
  readonly stages: Stage[] = [];

  constructor() {
    // The live maps: complete once every plugin is set up.
    this.provide(Services.guardrailChecks, this.guardrails);
    this.provide(Services.providerAdapters, this.providers);
    this.provide(Services.pluginConfigFields, this.configFields);
  }

  /** Makes `owner` the service's one provider; a second provider of the same service is refused, naming both. */
  provide<T>(token: ServiceToken<T>, value: T, owner = HOST): void {
    const held = this.services.get(token.id);
    if (held) throw new Error(`service "${token.id}" from ${owner} is already provided by ${held.owner}; a service has one provider`);
    this.services.set(token.id, { value, owner });
  }

  /** The service, or undefined when nothing provides it. */
  optional<T>(token: ServiceToken<T>): T | undefined {
    return this.lookup(token)?.value;
  }

  /** The service; throws, naming it and who needs it, when nothing provides it. */
  service<T>(token: ServiceToken<T>, needer = HOST): T {
    const found = this.lookup(token);
    if (!found) throw new Error(`${needer} needs service "${token.id}", which no loaded plugin provides`);
    return found.value;
  }

  private lookup<T>(token: ServiceToken<T>): { value: T } | undefined {
    // The one place a service's type is taken on trust: `provide` stored a T under this id.
    return this.services.get(token.id) as { value: T } | undefined;
  }

  /** Runs every plugin's `onReady` hooks in load order, once; a hook that throws stops the start, naming its plugin. */
  async ready(): Promise<void> {
    this.settingUp = false;
    for (const { plugin, fn } of this.readyHooks.splice(0)) {
      try {
        await fn();
      } catch (error) {
        throw new Error(`plugin ${plugin} failed when ready: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  }

  /** What the registry holds now, so that a plugin whose setup fails can be taken out again whole. */
  snapshot(): () => void {
    const maps = [this.providers, this.strategies, this.guardrails, this.services, this.owners].map(
      (m) => [m, new Map(m as Map<string, unknown>)] as const,
    );
    const routes = this.routes.length;
    const closers = this.closers.length;
    const readyHooks = this.readyHooks.length;
    const stages = this.stages.length;
    const configFields = this.configFields.length;
    return () => {
      for (const [live, saved] of maps) {
        const target = live as Map<string, unknown>;
        target.clear();
        for (const [k, v] of saved) target.set(k, v);
      }
      this.routes.length = routes;
      this.closers.length = closers;
      this.readyHooks.length = readyHooks;
      this.stages.length = stages;
      this.configFields.length = configFields;
    };
  }

  /** The API one plugin sees; registrations are tagged with its name. */
  apiFor(name: string, deps: { env: Record<string, string | undefined>; logger: Logger; state: StateStore }): PluginApi {
    const registry = this;
    return {
      name,
      env: deps.env,
      logger: deps.logger,
      state: deps.state,
      service: (token) => registry.service(token, `plugin ${name}`),
      optional: (token) => registry.optional(token),
      provide(token, value): void {
        if (!registry.settingUp) throw new Error(`plugin ${name} provides service "${token.id}" after setup; services are provided in setup`);
        registry.provide(token, value, `plugin ${name}`);
      },
      provider(adapter: ProviderAdapter): void {
        const owner = registry.owners.get(adapter.id);
        if (owner && owner !== name) throw new Error(`provider "${adapter.id}" from ${name} is already registered by ${owner}`);
        registry.providers.set(adapter.id, adapter);
        registry.owners.set(adapter.id, name);
      },
      stage(stage): void {
        // The running order is decided once, from the stages added in setup.
        if (!registry.settingUp) throw new Error(`plugin ${name} adds stage "${stage.name}" after setup; stages are added in setup`);
        registry.stages.push(stage);
      },
      strategy: (strategy) => void registry.strategies.set(strategy.mode, strategy),
      guardrail: (check) => void registry.guardrails.set(check.id, check),
      route: (route) => void registry.routes.push({ plugin: name, route }),
      configFields(fields): void {
        // The config schema is assembled once, from the fields declared in setup.
        if (!registry.settingUp) throw new Error(`plugin ${name} declares config fields after setup; fields are declared in setup`);
        registry.configFields.push({ plugin: name, fields });
      },
      onReady: (fn) => void registry.readyHooks.push({ plugin: name, fn }),
      onClose: (fn) => void registry.closers.push(fn),
    };
  }
}
