import {
  createConfiguration,
  ServerConfiguration,
  type Configuration,
  type KubeConfig,
  type RequestContext,
} from '@kubernetes/client-node';

/**
 * The configuration of the bridge's API clients: the kubeconfig's credentials on every request, over
 * one pool of connections. As `makeApiClient` configures them, each request gets a new connection
 * pool and so a new TLS handshake (kube-apiserver asks for a client certificate), which made an
 * eviction cost 3–4 times what it does on a connection kept open. The pool is the first request's;
 * headers (tokens, which may rotate) are still set per request, while a client certificate replaced
 * on disk is used from the bridge's next start.
 */
export function pooledConfiguration(kc: KubeConfig): Configuration {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  let pool: ReturnType<RequestContext['getDispatcher']>;
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: {
      default: {
        getName: () => 'kubeconfig, over one connection pool',
        async applySecurityAuthentication(context: RequestContext) {
          await kc.applySecurityAuthentication(context);
          if (pool === undefined) pool = context.getDispatcher();
          else context.setDispatcher(pool);
        },
      },
    },
  });
}
