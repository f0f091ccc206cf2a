# usl: Gunther's Universal Scalability Law fitted to thread-scaling timings
# (usl.h), for the timing study. Its own file so that tools/CMakeLists.txt
# needs one line for it.
add_library(usl STATIC ${CMAKE_CURRENT_LIST_DIR}/usl.c)
target_include_directories(usl PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(usl PRIVATE m rt_warnings)
