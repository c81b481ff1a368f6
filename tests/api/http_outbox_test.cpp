// Outbox: a streamed body between the handler that writes it and libmicrohttpd's polling thread
// that sends it. No connection here: read() is only called while it finds data or an ended
// stream, so it never suspends one.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "api/server/http_outbox.h"

namespace vllm::api::http {
namespace {

// One read() as MHD's polling thread makes it: the bytes, or "" with *ret set.
std::string read_once(std::shared_ptr<Outbox>& ob, ssize_t* ret) {
  char buf[256];
  *ret = Outbox::read(&ob, 0, buf, sizeof buf);
  return *ret > 0 ? std::string(buf, static_cast<size_t>(*ret)) : std::string();
}

// The server stops (drain closes every live stream) while the handler still has events to
// send: its write is refused, it returns, and the body must end in an error, not in the clean
// end of a chunked body. It used to end cleanly, so an SSE client at shutdown got a stream cut
// short with neither an error event nor [DONE], which reads as a complete answer.
TEST(Outbox, AStreamCutShortByCloseEndsInAnError) {
  auto ob = std::make_shared<Outbox>(nullptr);
  ASSERT_TRUE(ob->write("data: 1\n\n"));
  ob->close();
  EXPECT_FALSE(ob->write("data: [DONE]\n\n"));
  ob->finish();
  ssize_t ret = 0;
  EXPECT_EQ(read_once(ob, &ret), "data: 1\n\n");  // what was written before still goes out
  read_once(ob, &ret);
  EXPECT_EQ(ret, MHD_CONTENT_READER_END_WITH_ERROR);
}

// The same when MHD asks for more before the handler has even tried to write again.
TEST(Outbox, AStreamClosedBeforeItsHandlerReturnedEndsInAnError) {
  auto ob = std::make_shared<Outbox>(nullptr);
  ASSERT_TRUE(ob->write("data: 1\n\n"));
  ob->close();
  ssize_t ret = 0;
  EXPECT_EQ(read_once(ob, &ret), "data: 1\n\n");
  read_once(ob, &ret);
  EXPECT_EQ(ret, MHD_CONTENT_READER_END_WITH_ERROR);
  ob->finish();
}

// A stream whose handler wrote everything it had ends cleanly, closed or not.
TEST(Outbox, AFinishedStreamEndsCleanly) {
  for (bool close_after : {false, true}) {
    auto ob = std::make_shared<Outbox>(nullptr);
    ASSERT_TRUE(ob->write("data: [DONE]\n\n"));
    ob->finish();
    if (close_after) ob->close();
    ssize_t ret = 0;
    EXPECT_EQ(read_once(ob, &ret), "data: [DONE]\n\n");
    read_once(ob, &ret);
    EXPECT_EQ(ret, MHD_CONTENT_READER_END_OF_STREAM) << close_after;
  }
}

}  // namespace
}  // namespace vllm::api::http
