// Apache Iceberg's REST catalog fixture, listening on 127.0.0.1 only.
//
// RESTCatalogServer builds its Jetty server with `new Server(port)`, which listens on every
// interface, and has no option for the host. This launcher keeps the fixture's own parts: the
// backend catalog is built by the fixture's initializeBackendCatalog (so the CATALOG_* variables
// and rest.port mean exactly what they mean to the fixture), requests go through the fixture's
// adapter and servlet. Only the Jetty connector is ours: bound to the loopback address, and
// without the fixture's SO_REUSEPORT, so a second server on the same port fails to start instead
// of sharing the port (and the SQLite file) with the first.
//
// It is in the fixture's package because the adapter and the catalog context are package-private.
package org.apache.iceberg.rest;

import java.lang.reflect.Method;
import org.apache.iceberg.util.PropertyUtil;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public final class LoopbackRESTCatalogServer {
  static final String HOST = "127.0.0.1";

  private LoopbackRESTCatalogServer() {}

  public static void main(String[] args) throws Exception {
    RESTCatalogServer.CatalogContext catalog = backendCatalog();

    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    RESTCatalogServlet servlet = new RESTCatalogServlet(new RESTServerCatalogAdapter(catalog));
    handler.addServlet(new ServletHolder(servlet), "/*");
    handler.insertHandler(new GzipHandler());

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(HOST);
    connector.setPort(
        PropertyUtil.propertyAsInt(
            catalog.configuration(),
            RESTCatalogServer.REST_PORT,
            RESTCatalogServer.REST_PORT_DEFAULT));
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    server.join();
  }

  /** The fixture's own backend catalog: its private initializeBackendCatalog, not a copy of it. */
  private static RESTCatalogServer.CatalogContext backendCatalog() throws Exception {
    Method initialize = RESTCatalogServer.class.getDeclaredMethod("initializeBackendCatalog");
    initialize.setAccessible(true);
    return (RESTCatalogServer.CatalogContext) initialize.invoke(new RESTCatalogServer());
  }
}
