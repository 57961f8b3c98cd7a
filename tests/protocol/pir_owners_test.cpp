// PirOwners (protocol/pir_owners.h): a registration made by an identity answers only to it; an
// anonymous one stays open; databases are separate; the table is bounded; a query's client id
// is read from its framing and a malformed query is left to the backend.
#include "protocol/pir_owners.h"

#include <gtest/gtest.h>

#include "core/bytes.h"
#include "pir/zippir/zippir_common.h"

namespace privsearch::protocol {
namespace {

constexpr auto kPayloads = v1::PIR_DATABASE_PAYLOADS;
constexpr auto kLists = v1::PIR_DATABASE_IVF_LISTS;

TEST(PirOwners, BoundRegistrationsAnswerOnlyToTheirIdentity) {
  PirOwners owners;
  owners.bind(kPayloads, 7, "alice");
  EXPECT_TRUE(owners.allowed(kPayloads, 7, "alice"));
  EXPECT_FALSE(owners.allowed(kPayloads, 7, "mallory"));
  EXPECT_FALSE(owners.allowed(kPayloads, 7, ""));  // nor anonymously
  // A second setup of the same registration by another identity does not move the binding.
  owners.bind(kPayloads, 7, "mallory");
  EXPECT_FALSE(owners.allowed(kPayloads, 7, "mallory"));
  // Anonymous setups bind nothing; the other database is separate.
  owners.bind(kPayloads, 8, "");
  EXPECT_TRUE(owners.allowed(kPayloads, 8, "anyone"));
  EXPECT_TRUE(owners.allowed(kLists, 7, "mallory"));
  EXPECT_EQ(owners.size(), 1u);
}

TEST(PirOwners, TheTableIsBounded) {
  PirOwners owners(3);
  for (std::uint64_t c = 0; c < 5; ++c) owners.bind(kPayloads, c, "id" + std::to_string(c));
  EXPECT_EQ(owners.size(), 3u);
  EXPECT_FALSE(owners.allowed(kPayloads, 4, "id0"));  // the newest kept
  EXPECT_TRUE(owners.allowed(kPayloads, 0, "id4"));   // the oldest forgotten
}

TEST(PirOwners, QueriesAreCheckedByTheClientIdTheyName) {
  ByteWriter w;
  pir::detail::put_header(w, pir::detail::kQueryMagic);
  w.put_u64(12345);  // params id
  w.put_u64(42);     // client id
  w.put_u64(0);      // query index
  const auto query = w.take();
  EXPECT_EQ(pir::query_client_id(query).value(), 42u);
  PirOwners owners;
  owners.bind(kPayloads, 42, "alice");
  EXPECT_TRUE(owners.allowed_query(kPayloads, query, "alice"));
  EXPECT_FALSE(owners.allowed_query(kPayloads, query, "mallory"));
  // Too short to name a client, or not a query: not ours to refuse (the backend says why).
  const std::vector<std::uint8_t> junk{1, 2, 3};
  EXPECT_FALSE(pir::query_client_id(junk).ok());
  EXPECT_TRUE(owners.allowed_query(kPayloads, junk, "mallory"));
}

}  // namespace
}  // namespace privsearch::protocol
