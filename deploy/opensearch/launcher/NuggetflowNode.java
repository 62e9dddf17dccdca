/*
 * Starts one OpenSearch node in this JVM, with the distribution's modules and the k-NN plugin
 * loaded as classpath plugins (there is no OpenSearch server tarball on Maven Central, only jars).
 *
 * Compiled and run by deploy/opensearch/node.sh; not part of any Maven build.
 *
 *   java -cp <cache>/classes:<cache>/lib/*:<cache>/knn-plugin/* \
 *        -Dlog4j2.configurationFile=deploy/opensearch/log4j2.properties \
 *        NuggetflowNode -Epath.home=... -Ehttp.port=... [-Ekey=value ...]
 *
 * Differences from bin/opensearch (org.opensearch.bootstrap.Bootstrap), on purpose:
 *   - no security manager, no jar-hell check, no native init (mlockall, seccomp);
 *   - bootstrap checks are not run (Node#validateNodeBeforeAcceptingRequests is a no-op);
 *   - no keystore; settings come from -E arguments and, if present, <path.home>/config/opensearch.yml;
 *   - plugins are classpath plugins. OpenSearch does not run extension loading for those, so
 *     main() loads every PainlessExtension on the classpath into lang-painless itself (k-NN's
 *     cosineSimilarity/l2Squared/..., analysis-common's script filters), as the distribution's
 *     lang-painless module would; see loadPainlessExtensions().
 *
 * SIGTERM/SIGINT run a shutdown hook that closes the node (flushes shards) before the JVM exits.
 */

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.painless.spi.PainlessExtension;
import org.opensearch.plugins.ExtensiblePlugin;
import org.opensearch.plugins.Plugin;

public final class NuggetflowNode extends Node {

    /** Modules of the regular distribution we ship on the classpath, plus k-NN. */
    static final List<Class<? extends Plugin>> PLUGINS = List.of(
        org.opensearch.transport.Netty4Plugin.class,                 // HTTP + transport
        org.opensearch.analysis.common.CommonAnalysisPlugin.class,   // english & co. analyzers
        org.opensearch.index.mapper.MapperExtrasPlugin.class,        // scaled_float, rank_feature, ...
        PainlessPlugin.class,                                        // painless scripts
        org.opensearch.index.reindex.ReindexPlugin.class,            // _reindex, _*_by_query
        org.opensearch.knn.plugin.KNNPlugin.class                    // knn_vector, knn query
    );

    private static final Logger LOG = LogManager.getLogger(NuggetflowNode.class);

    /** Extension loader over the (single, flat) classpath: java.util.ServiceLoader. */
    static final ExtensiblePlugin.ExtensionLoader CLASSPATH_EXTENSIONS = new ExtensiblePlugin.ExtensionLoader() {
        @Override
        public <T> List<T> loadExtensions(Class<T> extensionPointType) {
            List<T> found = new ArrayList<>();
            ServiceLoader.load(extensionPointType, NuggetflowNode.class.getClassLoader()).forEach(found::add);
            return found;
        }
    };

    /**
     * For a plugin bundle, PluginsService calls PainlessPlugin#loadExtensions with the
     * extensions of the plugins that extend lang-painless; for classpath plugins it does not.
     * PainlessPlugin is final and keeps its allowlists in a static map that getScriptEngine()
     * reads, so loading the extensions through a throwaway instance before the node is built
     * has the same effect. (verify.sh checks it with a painless cosineSimilarity query.)
     */
    static void loadPainlessExtensions() {
        new PainlessPlugin().loadExtensions(CLASSPATH_EXTENSIONS);
        LOG.info("painless extensions loaded: {}", CLASSPATH_EXTENSIONS.loadExtensions(PainlessExtension.class)
            .stream().map(e -> e.getClass().getName()).toList());
    }

    NuggetflowNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
        super(environment, plugins, true);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> props = new TreeMap<>();
        for (String arg : args) {
            if (arg.startsWith("-E") && arg.indexOf('=') > 2) {
                int eq = arg.indexOf('=');
                props.put(arg.substring(2, eq), arg.substring(eq + 1));
            } else {
                System.err.println("usage: NuggetflowNode -Ekey=value ... (got: " + arg + ")");
                System.exit(64);
            }
        }
        String home = props.get("path.home");
        if (home == null) {
            System.err.println("NuggetflowNode: -Epath.home=... is required");
            System.exit(64);
        }
        Path configDir = Paths.get(home).toAbsolutePath().resolve("config");
        Files.createDirectories(configDir);

        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            if (e instanceof LinkageError) {
                // Deviation from OpenSearch (which halts on every Error): the k-NN native engines
                // (faiss, nmslib) have no native libraries here, and a knn_vector field without
                // "engine": "lucene" throws UnsatisfiedLinkError on a write thread at the first
                // flush. Keep the node up; the affected shard fails, the rest keeps working.
                LOG.error("uncaught " + e + " in thread [" + thread.getName() + "]: k-NN native engines"
                    + " (faiss/nmslib) are not available in this deployment; map knn_vector fields with"
                    + " \"method\": {\"engine\": \"lucene\", ...}", e);
                return;
            }
            if (e instanceof Error && !(e instanceof AssertionError)) {
                // same policy as OpenSearch's own handler: a VM error leaves the node unusable
                LOG.fatal("fatal error in thread [" + thread.getName() + "], exiting", e);
                System.err.println("fatal error in thread [" + thread.getName() + "]: " + e);
                Runtime.getRuntime().halt(1);
            }
            LOG.error("uncaught exception in thread [" + thread.getName() + "]", e);
        });

        Environment env = InternalSettingsPreparer.prepareEnvironment(
            Settings.EMPTY, props, configDir, () -> "nuggetflow-node");

        // Registered before the node is built, as Bootstrap does: a SIGTERM during startup
        // still closes whatever was started (and System.exit below runs it too).
        final AtomicReference<NuggetflowNode> nodeRef = new AtomicReference<>();
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                NuggetflowNode node = nodeRef.get();
                if (node != null) {
                    LOG.info("shutdown requested, closing node");
                    node.close();
                    if (!node.awaitClose(30, TimeUnit.SECONDS)) {
                        LOG.warn("node did not stop within 30 seconds");
                    }
                    LOG.info("node closed");
                }
            } catch (Throwable t) {
                LOG.error("error while closing node", t);
            } finally {
                stopped.countDown();
                shutdownLogging();
            }
        }, "nuggetflow-node-shutdown"));

        try {
            loadPainlessExtensions();
            NuggetflowNode node = new NuggetflowNode(env, PLUGINS);
            nodeRef.set(node);
            node.start();
        } catch (Throwable t) {
            LOG.fatal("OpenSearch node failed to start", t);
            System.err.println("OpenSearch node failed to start: " + t);
            t.printStackTrace();
            System.exit(1);
        }

        LOG.info("nuggetflow OpenSearch node started: http.port [{}], plugins {}",
            env.settings().get("http.port"), PLUGINS.stream().map(Class::getSimpleName).toList());
        System.out.println("nuggetflow OpenSearch node started");
        // keep a non-daemon thread alive until the shutdown hook has closed the node
        stopped.await();
    }

    private static void shutdownLogging() {
        try {
            Configurator.shutdown((LoggerContext) LogManager.getContext(false));
        } catch (Throwable ignored) {
            // logging is best effort at this point
        }
    }
}
