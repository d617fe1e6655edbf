# Spark Structured Streaming from Kafka into an Iceberg table of the REST catalog, as the
# comparison runs it (spark-submit, local[2]): trigger(availableNow=True) reads the topic from
# the start to the offsets listed at the start, then the query stops.
#   append: the parsed rows are appended (Iceberg's streaming sink).
#   merge:  each micro-batch, reduced to the latest message of each id, is MERGEd INTO the table
#           on id, merge-on-read: a v3 table writes deletion vectors for the rows it replaces.
# The table is made here, with the orders' columns, before the query starts.
#
#   spark-submit ... spark_stream.py MODE BOOTSTRAP TOPIC CATALOG_URI NAMESPACE TABLE CHECKPOINT
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

mode, bootstrap, topic, catalog_uri, namespace, table, checkpoint = sys.argv[1:8]
name = f"rest.{namespace}.{table}"

spark = (
    SparkSession.builder.appName(f"floe-bench-spark-{mode}")
    .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    .config("spark.sql.catalog.rest", "org.apache.iceberg.spark.SparkCatalog")
    .config("spark.sql.catalog.rest.type", "rest")
    .config("spark.sql.catalog.rest.uri", catalog_uri)
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")

ORDERS = StructType(
    [
        StructField("id", LongType()),
        StructField("customer_id", LongType()),
        StructField("status", StringType()),
        StructField("amount", DoubleType()),
        StructField("currency", StringType()),
        StructField("created_at", StringType()),
        StructField("note", StringType()),
    ]
)

spark.sql(
    f"""CREATE TABLE {name} (id bigint, customer_id bigint, status string, amount double,
        currency string, created_at string, note string) USING iceberg
        TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='merge-on-read',
        'write.update.mode'='merge-on-read', 'write.delete.mode'='merge-on-read')"""
)

source = (
    spark.readStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .load()
)
parsed = source.select(
    F.from_json(F.col("value").cast("string"), ORDERS).alias("o"), F.col("partition"), F.col("offset")
)

if mode == "append":
    query = (
        parsed.select("o.*")
        .writeStream.format("iceberg")
        .outputMode("append")
        .trigger(availableNow=True)
        .option("checkpointLocation", checkpoint)
        .toTable(name)
    )
else:

    def merge(batch, batch_id):
        # MERGE refuses two source rows for one target row: keep each id's latest message. An
        # id's messages are all in one partition (keyed by id), so its highest offset is its latest.
        latest = (
            batch.groupBy(F.col("o.id").alias("id"))
            .agg(F.max_by(F.col("o"), F.col("offset")).alias("o"))
            .select("o.*")
        )
        latest.createOrReplaceTempView("latest")
        latest.sparkSession.sql(
            f"""MERGE INTO {name} t USING latest s ON t.id = s.id
                WHEN MATCHED THEN UPDATE SET *
                WHEN NOT MATCHED THEN INSERT *"""
        )

    query = (
        parsed.writeStream.foreachBatch(merge)
        .trigger(availableNow=True)
        .option("checkpointLocation", checkpoint)
        .start()
    )

query.awaitTermination()
spark.stop()
