import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A small order-analytics batch job, for {@code make demo}: each batch generates order records as CSV text,
 * parses them with a regular expression, fingerprints them with SHA-256, scans for near-duplicate orders,
 * aggregates revenue with streams and collections, sorts, and renders a text report. It runs batches for
 * {@code seconds} (default 10) and prints a short summary.
 *
 * <p>Where the time goes, roughly: the near-duplicate scan ({@code Demo$Dedup.editDistance}) and parsing
 * ({@code Demo$OrderParser.parse}) are the two hot spots; fingerprinting, generation, aggregation, sorting and
 * the report share the rest.
 */
public final class Demo {
    static final int ORDERS_PER_BATCH = 20_000;
    static final String[] CUSTOMERS = {
        "acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka", "tyrell", "cyberdyne",
        "soylent", "aperture", "vandelay", "oceanic", "nakatomi", "gringotts",
    };
    static final String[] CATEGORIES = {"books", "garden", "tools", "toys", "kitchen", "music", "office", "sport"};

    /** One parsed order line. */
    record Order(long id, String customer, String category, String sku, int quantity, long unitCents,
                 String country) {
        long totalCents() {
            return quantity * unitCents;
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10.0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Random random = new Random(42);
        OrderParser parser = new OrderParser();
        Ledger ledger = new Ledger();
        Map<String, Long> revenueByCustomer = new HashMap<>();
        long orders = 0;
        long suspects = 0;
        int batches = 0;
        String lastReport = "";

        while (System.nanoTime() < end) {
            String csv = Generator.batch(random, batches, ORDERS_PER_BATCH);
            List<Order> parsed = parser.parseAll(csv);
            ledger.record(parsed);
            suspects += Dedup.nearDuplicates(parsed, 6);
            Map<String, Long> batchRevenue = Analytics.revenueByCustomer(parsed);
            batchRevenue.forEach((k, v) -> revenueByCustomer.merge(k, v, Long::sum));
            List<Order> largest = Analytics.largestOrders(parsed, 25);
            lastReport = Report.render(batches, parsed, Analytics.revenueByCategory(parsed), largest);
            orders += parsed.size();
            batches++;
        }

        System.out.println("Demo: " + batches + " batches, " + orders + " orders, ledger " + ledger.digestHex()
                + ", rejected lines " + parser.rejected + ", suspected duplicates " + suspects);
        System.out.println("Top customers: " + Analytics.top(revenueByCustomer, 5));
        System.out.println(lastReport.lines().limit(4).collect(Collectors.joining("\n")));
    }

    /** Produces batches of CSV text, one order per line. */
    static final class Generator {
        static String batch(Random random, int batch, int count) {
            StringBuilder sb = new StringBuilder(count * 64);
            sb.append("id,customer,category,sku,quantity,unit_price,country\n");
            for (int i = 0; i < count; i++) {
                long id = (long) batch * count + i;
                String customer = CUSTOMERS[random.nextInt(CUSTOMERS.length)];
                String category = CATEGORIES[random.nextInt(CATEGORIES.length)];
                sb.append(id).append(',').append(customer).append(',').append(category).append(',')
                        .append(category.substring(0, 3).toUpperCase(Locale.ROOT)).append('-')
                        .append(1000 + random.nextInt(9000)).append(',')
                        .append(1 + random.nextInt(12)).append(',')
                        .append(random.nextInt(500)).append('.').append(10 + random.nextInt(90)).append(',')
                        .append(random.nextBoolean() ? "DE" : (random.nextBoolean() ? "FR" : "US")).append('\n');
                if (random.nextInt(500) == 0) {
                    sb.append("corrupt line ").append(i).append('\n');
                }
            }
            return sb.toString();
        }
    }

    /** Parses CSV order lines with a regular expression; counts lines that do not match. */
    static final class OrderParser {
        private static final Pattern LINE = Pattern.compile(
                "^(\\d+),([a-z]+),([a-z]+),([A-Z]{3}-\\d{4}),(\\d{1,3}),(\\d+)\\.(\\d{2}),([A-Z]{2})$");
        long rejected;

        List<Order> parseAll(String csv) {
            List<Order> out = new ArrayList<>(ORDERS_PER_BATCH);
            boolean header = true;
            for (String line : csv.split("\n")) {
                if (header) {
                    header = false;
                    continue;
                }
                Order o = parse(line);
                if (o != null) {
                    out.add(o);
                } else {
                    rejected++;
                }
            }
            return out;
        }

        Order parse(String line) {
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                return null;
            }
            long cents = Long.parseLong(m.group(6)) * 100 + Integer.parseInt(m.group(7));
            return new Order(Long.parseLong(m.group(1)), m.group(2), m.group(3), m.group(4),
                    Integer.parseInt(m.group(5)), cents, m.group(8));
        }
    }

    /** A running SHA-256 over every order's fingerprint, like an append-only audit log. */
    static final class Ledger {
        private final MessageDigest chain = sha256();
        private final MessageDigest perOrder = sha256();
        private final StringBuilder canonical = new StringBuilder(96);

        void record(List<Order> orders) {
            for (Order o : orders) {
                chain.update(fingerprint(o));
            }
        }

        byte[] fingerprint(Order o) {
            // A canonical, field-ordered serialisation: what gets signed must not depend on toString().
            canonical.setLength(0);
            canonical.append(o.id()).append('|').append(o.customer()).append('|').append(o.category()).append('|')
                    .append(o.sku()).append('|').append(o.quantity()).append('|').append(o.unitCents()).append('|')
                    .append(o.country());
            return perOrder.digest(canonical.toString().getBytes(StandardCharsets.UTF_8));
        }

        String digestHex() {
            try {
                MessageDigest copy = (MessageDigest) chain.clone();
                return HexFormat.of().formatHex(copy.digest()).substring(0, 16);
            } catch (CloneNotSupportedException e) {
                return "n/a";
            }
        }

        private static MessageDigest sha256() {
            try {
                return MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Flags orders that look like re-submissions: same customer, nearly the same SKU, close together. */
    static final class Dedup {
        static int nearDuplicates(List<Order> orders, int window) {
            int found = 0;
            for (int i = 0; i < orders.size(); i++) {
                Order a = orders.get(i);
                for (int j = Math.max(0, i - window); j < i; j++) {
                    Order b = orders.get(j);
                    if (editDistance(a.customer(), b.customer()) <= 1 && editDistance(a.sku(), b.sku()) <= 1) {
                        found++;
                    }
                }
            }
            return found;
        }

        /** Levenshtein distance, two rows. */
        static int editDistance(String a, String b) {
            int[] prev = new int[b.length() + 1];
            int[] cur = new int[b.length() + 1];
            for (int j = 0; j <= b.length(); j++) {
                prev[j] = j;
            }
            for (int i = 1; i <= a.length(); i++) {
                cur[0] = i;
                char ca = a.charAt(i - 1);
                for (int j = 1; j <= b.length(); j++) {
                    int substitute = prev[j - 1] + (ca == b.charAt(j - 1) ? 0 : 1);
                    cur[j] = Math.min(substitute, Math.min(prev[j], cur[j - 1]) + 1);
                }
                int[] t = prev;
                prev = cur;
                cur = t;
            }
            return prev[b.length()];
        }
    }

    /** Aggregations over one batch, with streams and collections. */
    static final class Analytics {
        static Map<String, Long> revenueByCustomer(List<Order> orders) {
            return orders.stream().collect(Collectors.groupingBy(Order::customer,
                    Collectors.summingLong(Order::totalCents)));
        }

        static Map<String, Long> revenueByCategory(List<Order> orders) {
            return orders.stream().collect(Collectors.groupingBy(Order::category, TreeMap::new,
                    Collectors.summingLong(Order::totalCents)));
        }

        static List<Order> largestOrders(List<Order> orders, int n) {
            List<Order> sorted = new ArrayList<>(orders);
            sorted.sort(Comparator.comparingLong(Order::totalCents).reversed()
                    .thenComparing(Order::customer)
                    .thenComparingLong(Order::id));
            return sorted.subList(0, Math.min(n, sorted.size()));
        }

        static String top(Map<String, Long> revenue, int n) {
            return revenue.entrySet().stream()
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                    .limit(n)
                    .map(e -> e.getKey() + "=" + Report.money(e.getValue()))
                    .collect(Collectors.joining(", "));
        }
    }

    /** Renders the text report of one batch. */
    static final class Report {
        static String render(int batch, List<Order> orders, Map<String, Long> byCategory, List<Order> largest) {
            StringBuilder sb = new StringBuilder();
            long total = orders.stream().mapToLong(Order::totalCents).sum();
            sb.append(String.format(Locale.ROOT, "Batch %d: %d orders, revenue %s%n", batch, orders.size(),
                    money(total)));
            byCategory.forEach((category, cents) -> sb.append(String.format(Locale.ROOT, "  %-8s %14s %5.1f%%%n",
                    category, money(cents), 100.0 * cents / total)));
            for (Order o : largest) {
                sb.append(String.format(Locale.ROOT, "  #%-8d %-10s %-9s x%-3d %12s%n", o.id(), o.customer(),
                        o.sku(), o.quantity(), money(o.totalCents())));
            }
            return sb.toString();
        }

        static String money(long cents) {
            return String.format(Locale.ROOT, "%,d.%02d", cents / 100, cents % 100);
        }
    }
}
